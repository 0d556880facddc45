// The `mw` contract under hostile input, run as a user runs it (a subprocess per case): generated
// families of bad files (nesting, huge values, NaN weights, absurd metadata, BOMs, __proto__, bad
// paths, an over-long rollout, more records than a call has arguments, mixed checkpoint pairs) and
// bad flags, for every command (export, import --from turns / --tokenizer, train, experiment too).
// Every refusal exits 2 (1 for a usage error) with exactly one line on stderr, no stack trace,
// nothing on stdout, within 30 s and 500 MB; every accepted file gives the output it would give
// without the hostile part.

import { spawn, spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveCheckpoint, saveCheckpointPair, saveOptimizerState, type OptimizerState } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights, parameterShapes } from '../model/params';
import { writeSafetensors } from '../util/safetensors';
import { createRng } from '../rollout/generate-random';
import { evictingRollout } from '../testing/evicting';
import { ROOT, WORKED } from './subprocess.testing';

const TMP = mkdtempSync(join(tmpdir(), 'mw-fuzz-'));
const MEASURED = join(ROOT, 'src/cli/measured.testing.ts');
const TINY: ModelConfig = { vocabSize: 272, nEmbd: 8, nLayer: 1, nHead: 2, nPositions: 16 };
const LIMIT_MS = 30_000;
const LIMIT_KB = 500 * 1024;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
  maxRssKB: number;
}

let runs = 0;
function mw(args: string[]): Promise<Outcome> {
  const rssFile = join(TMP, `rss-${runs++}`);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', './scripts/register.mjs', MEASURED, ...args], {
      cwd: ROOT,
      env: { ...process.env, MW_RSS_FILE: rssFile, MW_DEBUG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // Past the limit: SIGTERM (the command removes its partial files and exits 143), SIGKILL 3 s later.
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    }, LIMIT_MS + 5000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearTimeout(kill);
      let maxRssKB = Infinity;
      try {
        maxRssKB = Number(readFileSync(rssFile, 'utf8'));
      } catch {
        // killed before it could write
      }
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - started, maxRssKB });
    });
  });
}

function file(name: string, content: string | Uint8Array): string {
  const path = join(TMP, name);
  writeFileSync(path, content);
  return path;
}

const worked = () => JSON.parse(readFileSync(WORKED, 'utf8')) as Record<string, unknown>;
const deepArray = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"k":'.repeat(depth)}0${'}'.repeat(depth)}`;

interface Case {
  family: string;
  args: string[];
  /** Exit status the contract gives this input. */
  code: 0 | 1 | 2;
  /** A refusal's stderr line must match this. */
  line?: RegExp;
  /** For exit 0: what stdout must equal (the output of the same input without the hostile part). */
  same?: string[];
}

/** Bad rollout and checkpoint files and paths, generated from one seed: each family several times with different values. */
function fileCases(): Case[] {
  const rng = createRng(19);
  const cases: Case[] = [];
  const ckpt = file('tiny.safetensors', saveCheckpoint(initWeights(TINY, 1)));

  // Nesting: deep values where events, pieces or kept fields go, in .json and on a JSONL line.
  const base = JSON.stringify(worked());
  for (const [depth, where] of [
    [5000, 0],
    [200_000, 1],
    [20_000 + rng.int(0, 1000), 2],
  ]) {
    const text =
      where === 0
        ? base.replace(/"events":\[/, `"events":[${deepArray(depth)},`)
        : where === 1
          ? base.replace(/"view":\[/, `"view":[${deepObject(depth)},`)
          : base.replace(/^\{/, `{"meta":${deepObject(depth)},`);
    const json = file(`deep-${depth}.json`, text);
    for (const command of [
      ['tree', json, '--json'],
      ['plan', json, '--method', 'packed-4d', '--json'],
      ['import', json, '--out', join(TMP, `deep-${depth}.out.jsonl`)],
      ['score', '--ckpt', ckpt, json, '--method', 'logit-tree', '--json'],
    ]) {
      cases.push({ family: `nesting ${depth}`, args: command, code: 2, line: /deep-\d+\.json: / });
    }
    if (where !== 0) continue;
    const jsonl = file(
      `deep-${depth}.jsonl`,
      `${base}\n${base.replace('"worked-example"', '"w2"')}\n${base.replace('"worked-example"', '"w3"').replace(/"events":\[/, `"events":[${deepArray(depth)},`)}\n`,
    );
    // Streamed output starts only after every line is validated: nothing on stdout for a bad line 3.
    for (const command of [
      ['tree', jsonl, '--json'],
      ['tree', jsonl, '--json', '--per-target'],
      ['plan', jsonl, '--method', 'sdcc', '--json'],
    ]) {
      cases.push({ family: `nesting ${depth} on line 3`, args: command, code: 2, line: /deep-\d+\.jsonl:3: event 0: an event must be an object, got \[\[\[/ });
    }
  }
  const chat = file(
    'deep-chat.jsonl',
    `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":${deepArray(20000)}}}]}]}\n`,
  );
  cases.push({
    family: 'nesting in a chat tool call',
    args: ['import', chat, '--out', join(TMP, 'deep-chat.out.jsonl')],
    code: 2,
    line: /deep-chat\.jsonl: no chat conversations/,
  });

  // Huge values: numbers at the ends of the float range in every numeric field.
  const huge = [1e308, -1.7976931348623157e308, 2 ** 53 + 2, 1e300];
  for (let i = 0; i < 4; i++) {
    const value = huge[i];
    const r = worked();
    const field = ['token', 'vocab', 'keep', 'logprob'][i];
    if (field === 'token') (r.events as { tokens?: number[] }[])[0].tokens![0] = value;
    if (field === 'vocab') r.vocab = value;
    if (field === 'keep') (r.events as { view?: { keep?: number[] }[] }[]).find((e) => e.view)!.view![0].keep = [0, value];
    if (field === 'logprob') {
      const act = (r.events as { role?: string; tokens?: number[]; logprobs?: number[] }[]).find((e) => e.role === 'act')!;
      act.logprobs = act.tokens!.map(() => -value);
    }
    const path = file(`huge-${field}.json`, JSON.stringify(r));
    cases.push({
      family: `huge ${field}`,
      args: ['tree', path, '--json'],
      code: field === 'logprob' && -value <= 0 ? 0 : 2,
      line: /huge-\w+\.json: /,
      same: field === 'logprob' ? ['tree', WORKED, '--json'] : undefined,
    });
  }
  const rewards = file('huge-reward.json', JSON.stringify({ ...worked(), reward: 1.7e308 }));
  cases.push({ family: 'huge reward', args: ['tree', rewards], code: 0, same: ['tree', WORKED] }); // the figures table (--json also prints the reward)

  // NaN and infinite weights: refused at load, naming the tensor.
  for (const [bad, tensor] of [
    [NaN, 'wte.weight'],
    [Infinity, 'h.0.mlp.c_fc.weight'],
    [-Infinity, 'ln_f.bias'],
  ] as const) {
    const w = initWeights(TINY, 2);
    w.tensors.get(tensor)![rng.int(0, w.tensors.get(tensor)!.length - 1)] = bad;
    const path = file(`bad-${tensor}.safetensors`, saveCheckpoint(w));
    cases.push({
      family: `${bad} weight`,
      args: ['score', '--ckpt', path, WORKED, '--method', 'packed-4d', '--json'],
      code: 2,
      line: new RegExp(
        `bad-.*\\.safetensors: checkpoint: tensor transformer\\.${tensor.replace(/\./g, '\\.')} holds ${bad} at index \\d+: every value must be finite$`,
      ),
    });
  }
  const nanDrift = join(TMP, 'bad-wte.weight.safetensors');
  cases.push({ family: 'NaN weight (drift)', args: ['drift', '--ckpt', nanDrift, '--rollouts', WORKED, '--json'], code: 2, line: /holds NaN/ });
  cases.push({ family: 'NaN weight (verify)', args: ['verify', WORKED, '--ckpt', nanDrift, '--json'], code: 2, line: /holds NaN/ });

  // Absurd metadata: a small file that claims a huge config, or a head size the kernels cannot run.
  const claims: [string, Partial<ModelConfig>][] = [
    ['n_layer', { nLayer: 10 ** rng.int(7, 9) }],
    ['n_head', { nHead: 8 }],
    ['vocab_size', { vocabSize: 2 ** 40 }],
    ['n_positions', { nPositions: 1e12 }],
    ['n_embd', { nEmbd: 2 ** 24 }],
  ];
  const tiny = initWeights(TINY, 3);
  for (const [name, claim] of claims) {
    const c = { ...TINY, ...claim };
    const meta = { vocab_size: `${c.vocabSize}`, n_embd: `${c.nEmbd}`, n_layer: `${c.nLayer}`, n_head: `${c.nHead}`, n_positions: `${c.nPositions}` };
    const path = file(
      `absurd-${name}.safetensors`,
      writeSafetensors(
        parameterShapes(TINY).map(({ name: n, shape }) => ({ name: n, shape, data: tiny.tensors.get(n)! })),
        meta,
      ),
    );
    cases.push({
      family: `absurd ${name}`,
      args: ['score', '--ckpt', path, WORKED, '--method', 'logit-tree'],
      code: 2,
      line: /checkpoint: config out of bounds: /,
    });
  }

  // Byte order marks: ignored by every reader, so the output is the same as without.
  const bom = '\ufeff';
  const jsonl = `${JSON.stringify(worked())}\n${JSON.stringify({ ...worked(), id: 'w2' })}\n`;
  const chatText = '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]}\n';
  for (const [name, text] of [
    ['bom.json', JSON.stringify(worked(), null, 2)],
    ['bom.jsonl', jsonl],
    ['bom-chat.jsonl', chatText],
  ]) {
    const plain = file(`plain-${name}`, text);
    cases.push({ family: `BOM ${name}`, args: ['tree', file(name, bom + text), '--json'], code: 0, same: ['tree', plain, '--json'] });
  }

  // Bad paths: missing, a folder, a name with a newline, --out into a missing folder or onto a folder.
  const folder = join(TMP, 'a-folder');
  mkdirSync(folder, { recursive: true });
  const newline = file('two\nlines.json', 'not json');
  cases.push({ family: 'missing file', args: ['tree', join(TMP, 'nope.json')], code: 2, line: /nope\.json: no such file$/ });
  cases.push({ family: 'folder as FILE', args: ['plan', folder, '--method', 'sdcc'], code: 2, line: /a-folder: not a file$/ });
  cases.push({ family: 'newline in name', args: ['tree', newline], code: 2, line: /two\\nlines\.json: invalid JSON/ });
  cases.push({
    family: '--out in a missing folder',
    args: ['import', WORKED, '--out', join(TMP, 'no-such-folder', 'x.jsonl')],
    code: 1,
    line: /^mw import: --out .*: folder .* does not exist/,
  });
  cases.push({ family: '--out onto a folder', args: ['import', WORKED, '--out', folder], code: 1, line: /^mw import: --out .* is a folder/ });

  // An over-long rollout for the model: refused from its events, before any tree or plan is built.
  const long = file(
    'long.json',
    JSON.stringify({
      format: 'memorywalker.rollout/v1',
      id: 'long',
      vocab: 272,
      events: [
        { op: 'append', role: 'prompt', text: 'p'.repeat(2_000_000) },
        { op: 'append', role: 'act', text: 'a'.repeat(1_000_000) },
      ],
    }),
  );
  cases.push({
    family: 'over-long rollout',
    args: ['score', '--ckpt', ckpt, long, '--method', 'packed-4d', '--json'],
    code: 2,
    line: /long\.json: rollout "long": packed-4d needs 3000002 positions, the model has 16$/,
  });
  return cases;
}

/**
 * Issue 31: outputs that are not a regular file of ours (a named pipe, the input under another name),
 * rollouts whose tree would be huge (the 2,000-edit rollout, N_packed 4,000,000), GPT-2 text of one
 * long piece, and bad --max-packed values.
 */
function reliabilityCases(): Case[] {
  const input = file('rel-in.json', readFileSync(WORKED));
  const fifo = join(TMP, 'rel-pipe');
  if (spawnSync('mkfifo', [fifo]).status !== 0) throw new Error('mkfifo failed');
  const symlink = join(TMP, 'rel-symlink.json');
  symlinkSync(input, symlink);
  const hardlink = join(TMP, 'rel-hardlink.json');
  linkSync(input, hardlink);
  const evict = file('rel-evict.json', evictingRollout(2000));
  const huge = /rel-evict\.json: rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows/;
  const letters = Array.from({ length: 100_000 }, (_, i) => String.fromCharCode(97 + ((i * 7 + (i >> 4)) % 26))).join('');
  const chat = file(
    'rel-long-line.jsonl',
    `${JSON.stringify({
      messages: [
        { role: 'user', content: letters },
        { role: 'assistant', content: `😀${letters.slice(0, 50_000)}` },
      ],
    })}\n`,
  );
  return [
    {
      family: 'outputs: --out a named pipe',
      args: ['export', input, '--method', 'packed-4d', '--out', fifo],
      code: 1,
      line: /^mw export: --out .* is a named pipe, not a regular file/,
    },
    {
      family: 'outputs: --out a symlink to the input',
      args: ['import', input, '--out', symlink],
      code: 1,
      line: /^mw import: --out .* is the input file .* under another name/,
    },
    { family: 'outputs: --out a hard link to the input', args: ['export', input, '--method', 'sdcc', '--out', hardlink], code: 1, line: /under another name/ },
    {
      family: 'outputs: verify --grad-out a named pipe',
      args: ['verify', input, '--grad-out', fifo],
      code: 1,
      line: /^mw verify: --grad-out .* is a named pipe/,
    },
    {
      family: 'outputs: --ckpt-out a named pipe',
      args: [
        'train',
        '--data',
        input,
        '--method',
        'packed-4d',
        '--objective',
        'sft',
        '--steps',
        '1',
        '--config',
        'tiny',
        '--ckpt-out',
        fifo,
        '--metrics',
        join(TMP, 'rel-m.jsonl'),
      ],
      code: 1,
      line: /is a named pipe/,
    },
    ...(['packed-4d', 'logit-tree', 'sdcc'] as const).map(
      (method): Case => ({
        family: `sizes: export ${method} of the 2,000-edit rollout`,
        args: ['export', evict, '--method', method, '--out', join(TMP, `rel-${method}.safetensors`)],
        code: 2,
        line: huge,
      }),
    ),
    { family: 'sizes: plan of the 2,000-edit rollout', args: ['plan', evict, '--method', 'naive-compressed', '--json'], code: 2, line: huge },
    { family: 'sizes: tree --per-target of the 2,000-edit rollout', args: ['tree', evict, '--per-target', '--json'], code: 2, line: huge },
    {
      family: 'sizes: --max-packed 0',
      args: ['plan', input, '--method', 'packed-4d', '--max-packed', '0'],
      code: 1,
      line: /--max-packed must be an integer ≥ 1/,
    },
    { family: 'sizes: --max-packed 1e9', args: ['tree', input, '--per-target', '--max-packed', '1e9'], code: 1, line: /--max-packed must be an integer ≥ 1/ },
    { family: 'gpt2: 150k characters without a space', args: ['import', chat, '--tokenizer', 'gpt2', '--out', join(TMP, 'rel-long-line.out.jsonl')], code: 0 },
  ];
}

/** Sizes past a JavaScript call's argument limit (~125k): a spread of them would overflow the stack (exit 70). */
function scaleCases(): Case[] {
  const rows = file(
    'rows-150k.jsonl',
    Array.from(
      { length: 150_000 },
      (_, i) =>
        `{"format":"memorywalker.rollout/v1","id":"r${i}","vocab":272,"events":[{"op":"append","role":"prompt","tokens":[1]},{"op":"append","role":"act","tokens":[2]}]}\n`,
    ).join(''),
  );
  const turns = file(
    'turns-150k.jsonl',
    Array.from({ length: 150_000 }, (_, i) => `{"prompt_ids":[1],"response_ids":[2],"trajectory_ids":"t${i}"}\n`).join(''),
  );
  const output = Array.from({ length: 300_000 }, () => 5);
  const survivor = file(
    'survivor.json',
    JSON.stringify({
      format: 'memorywalker.calls/v1',
      id: 'c',
      vocab: 272,
      calls: [
        { input: [1, 2, 3], output },
        { input: [1, 9, ...output], output: [7] },
      ],
    }),
  );
  return [
    { family: 'a table of 150,000 rollouts', args: ['tree', rows], code: 0 },
    { family: 'a turn dump of 150,000 records', args: ['import', turns, '--out', join(TMP, 'turns-150k.out.jsonl')], code: 0 },
    { family: 'a surviving output of 300,000 tokens', args: ['import', survivor, '--out', join(TMP, 'survivor.out.jsonl')], code: 0 },
  ];
}

function exportCases(): Case[] {
  const out = join(TMP, 'batch.safetensors');
  const deep = join(TMP, 'deep-5000.json');
  return [
    { family: 'export: nesting', args: ['export', deep, '--method', 'packed-4d', '--out', out], code: 2, line: /deep-5000\.json: / },
    {
      family: 'export: missing file',
      args: ['export', join(TMP, 'nope.jsonl'), '--method', 'sdcc', '--out', out],
      code: 2,
      line: /nope\.jsonl: no such file$/,
    },
    {
      family: 'export: --out in a missing folder',
      args: ['export', WORKED, '--method', 'sdcc', '--out', join(TMP, 'no-such-folder', 'b.safetensors')],
      code: 1,
      line: /^mw export: --out .*: folder .* does not exist/,
    },
    {
      family: 'export: --out onto a folder',
      args: ['export', WORKED, '--method', 'sdcc', '--out', join(TMP, 'a-folder')],
      code: 1,
      line: /^mw export: --out .* is a folder/,
    },
    ...['0', 'abc', '1e400', '=-5'].map(
      (n): Case => ({
        family: `export: --max-tokens ${n}`,
        args: ['export', WORKED, '--method', 'sdcc', '--out', out, ...(n.startsWith('=') ? [`--max-tokens${n}`] : ['--max-tokens', n])],
        code: 1,
        line: /^mw export: --max-tokens must be an integer ≥ 1/,
      }),
    ),
    {
      family: 'export: --max-tokens -5',
      args: ['export', WORKED, '--method', 'sdcc', '--out', out, '--max-tokens', '-5'],
      code: 1,
      line: /^mw export: Option '--max-tokens' argument is ambiguous\. .* use '--max-tokens=-XYZ'/,
    },
    {
      family: 'export: a packed sequence over --max-tokens',
      args: ['export', WORKED, '--method', 'packed-4d', '--out', out, '--max-tokens', '10'],
      code: 2,
      line: /a packed-4d sequence of 21 rows does not fit --max-tokens 10/,
    },
  ];
}

/** Claude Code sessions (`mw import`, detected): links of the wrong type or in a loop name their line; nothing is written. */
function agentSessionCases(): Case[] {
  const rec = (n: number, parent: number | null, extra = '') =>
    `{"parentUuid":${parent === null ? 'null' : `"u${parent}"`},"isSidechain":false,"sessionId":"s","type":"${n % 2 ? 'user' : 'assistant'}","message":{"role":"${n % 2 ? 'user' : 'assistant'}","content":"m${n}"},"uuid":"u${n}"${extra}}\n`;
  const bad: [string, string, RegExp][] = [
    [
      'parentUuid of the wrong type',
      rec(1, null) + rec(2, 1).replace('"parentUuid":"u1"', '"parentUuid":7'),
      /:2: "parentUuid" must be a string or null, got 7$/,
    ],
    ['uuid of the wrong type', rec(1, null) + rec(2, 1).replace('"uuid":"u2"', '"uuid":["u2"]'), /:2: "uuid" must be a string or null, got \["u2"\]$/],
    [
      'isSidechain of the wrong type',
      rec(1, null) + rec(2, 1, ',"isSidechain":"no"').replace('"isSidechain":false,', ''),
      /:2: "isSidechain" must be true or false, got "no"$/,
    ],
    ['message of the wrong type', rec(1, null) + rec(2, 1).replace(/"message":\{[^}]*\}/, '"message":"hi"'), /:2: "message" must be an object, got "hi"$/],
    ['parent links in a loop', rec(1, 3) + rec(2, 1) + rec(3, 2), /:3: parentUuid links form a loop through uuid "u3"$/],
  ];
  return bad.map(([name, text, line], i) => ({
    family: `agent-session: ${name}`,
    args: ['import', file(`session-${i}.jsonl`, text), '--out', join(TMP, `session-${i}.out.jsonl`)],
    code: 2,
    line,
  }));
}

/** Trainer dumps (`mw import --from turns`): one record per model call, in token space. */
function turnsCases(): Case[] {
  const turn = (fields: string) => `{"prompt_ids":[10,11],"response_ids":[20,21],"trajectory_ids":"q"${fields}}\n`;
  const bad: [string, string, RegExp][] = [
    ['nesting', `{"prompt_ids":[1],"response_ids":[${deepArray(50_000)}],"trajectory_ids":"q"}\n`, /:1: response_ids\[0\] = \[\[\[.* is not a token id/],
    ['huge id', turn('').replace('[10,11]', '[1e308]'), /:1: prompt_ids\[0\] = 1e\+308 is not a token id \(an integer in \[0, 2147483647\)\)$/],
    ['negative id', turn('').replace('[10,11]', '[-1]'), /:1: prompt_ids\[0\] = -1 is not a token id/],
    ['fractional id', turn('').replace('[20,21]', '[2.5]'), /:1: response_ids\[0\] = 2\.5 is not a token id/],
    ['infinite logprob', turn(',"rollout_logprobs":[-1e999,-1]'), /:1: rollout_logprobs\[0\] = -Infinity is not a finite number <= 0$/],
    ['positive logprob', turn(',"rollout_logprobs":[0.5,-1]'), /:1: rollout_logprobs\[0\] = 0\.5 is not a finite number <= 0$/],
    ['huge vocabulary', turn(',"vocab_size":1e300'), /:1: vocab_size must be an integer in \[1, 2147483647\], got 1e\+300$/],
    ['a token outside its vocabulary', turn(',"vocab_size":15'), /:1: token id 21 is outside the vocabulary of 15$/],
    ['a record that is not an object', `${turn('')}[1,2]\n`, /:2: expected a turn record/],
    ['invalid JSON on line 2', `${turn('')}{"prompt_ids":[1\n`, /:2: invalid JSON/],
  ];
  const cases: Case[] = bad.map(([name, text, line], i) => ({
    family: `turns: ${name}`,
    args: ['import', file(`turns-${i}.jsonl`, text), '--from', 'turns', '--out', join(TMP, `turns-${i}.out.jsonl`)],
    code: 2,
    line,
  }));
  const bom = file('turns-bom.jsonl', `\ufeff${turn('')}`);
  const proto = file('turns-proto.jsonl', turn(',"__proto__":{"polluted":true}'));
  const rewards = file('turns-rewards.jsonl', turn(',"rewards":[1.7e308]'));
  for (const [name, path] of [
    ['BOM', bom],
    ['__proto__', proto],
    ['reward 1.7e308', rewards],
  ]) {
    cases.push({ family: `turns: ${name}`, args: ['import', path, '--out', join(TMP, `${name.replace(/\W/g, '')}.out.jsonl`)], code: 0 });
  }
  cases.push({
    family: 'turns: mw export of a bad dump',
    args: ['export', join(TMP, 'turns-1.jsonl'), '--method', 'sdcc', '--out', join(TMP, 'turns.safetensors')],
    code: 2,
    line: /turns-1\.jsonl:1: prompt_ids\[0\] = 1e\+308/,
  });
  return cases;
}

function tokenizerCases(): Case[] {
  const calls = (vocab: number, output: number[]) => JSON.stringify({ format: 'memorywalker.calls/v1', id: 'c', vocab, calls: [{ input: [1, 2], output }] });
  return [
    {
      family: 'import --tokenizer bogus',
      args: ['import', WORKED, '--tokenizer', 'bogus', '--out', join(TMP, 't.jsonl')],
      code: 1,
      line: /^mw import: unknown tokenizer "bogus" \(byte, gpt2, or a model folder with a tokenizer\.json\)/,
    },
    {
      family: 'import --tokenizer byte of a turn dump with ids past 272',
      args: ['import', file('turns-gpt2.jsonl', '{"prompt_ids":[15496,995],"response_ids":[50256]}\n'), '--tokenizer', 'byte', '--out', join(TMP, 't.jsonl')],
      code: 2,
      line: /turns-gpt2\.jsonl:1: token id 50256 is outside the vocabulary of 272$/,
    },
    {
      family: 'import --tokenizer gpt2: an id past GPT-2',
      args: ['import', file('calls-gpt2.json', calls(50257, [60000])), '--tokenizer', 'gpt2', '--out', join(TMP, 't.jsonl')],
      code: 2,
      line: /calls-gpt2\.json: calls\[0\]\.output\[0\] = 60000 is not a token id in \[0, 50257\)$/,
    },
    {
      family: 'import --tokenizer gpt2: a chat log with a BOM',
      args: [
        'import',
        file('chat-bom.jsonl', '\ufeff{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}\n'),
        '--tokenizer',
        'gpt2',
        '--out',
        join(TMP, 'chat-bom.out.jsonl'),
      ],
      code: 0,
    },
    {
      family: 'import --from bogus',
      args: ['import', WORKED, '--from', 'bogus', '--out', join(TMP, 't.jsonl')],
      code: 1,
      line: /^mw import: unknown format "bogus"/,
    },
  ];
}

function adamState(config: ModelConfig, step: number, fill: number): OptimizerState {
  const state: OptimizerState = { step, m: new Map(), v: new Map() };
  for (const { name, shape } of parameterShapes(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    state.m.set(name, new Float32Array(n).fill(fill));
    state.v.set(name, new Float32Array(n).fill(fill * fill));
  }
  return state;
}

/** A checkpoint whose token embedding holds a NaN, for the families that run alone (-t) as well as after the others. */
function nanWeightsFile(): string {
  const w = initWeights(TINY, 2);
  w.tensors.get('wte.weight')![0] = NaN;
  return file('nan-wte.safetensors', saveCheckpoint(w));
}

/** `mw train`: bad --checkpoint-every values, and --ckpt-in pairs that must not be resumed (all refused before the GPU starts). */
function trainCases(): Case[] {
  // Each case its own --ckpt-out: the cases run two at a time, and one checkpoint name has one writer (its lock).
  let runs = 0;
  const train = (...extra: string[]) => [
    'train',
    '--data',
    WORKED,
    '--method',
    'packed-4d',
    '--objective',
    'sft',
    '--steps',
    '2',
    '--ckpt-out',
    join(TMP, `trained-${++runs}.safetensors`),
    '--metrics',
    join(TMP, `trained-${runs}.jsonl`),
    ...extra,
  ];
  const cases: Case[] = ['0', 'abc', '1.5', '1e400', '=-1'].map((k) => ({
    family: `train --checkpoint-every ${k}`,
    args: train(...(k.startsWith('=') ? [`--checkpoint-every${k}`] : ['--checkpoint-every', k])),
    code: 1,
    line: /^mw train: --checkpoint-every must be an integer ≥ 1/,
  }));
  cases.push({
    family: 'train --checkpoint-every -1',
    args: train('--checkpoint-every', '-1'),
    code: 1,
    line: /argument is ambiguous\. .* use '--checkpoint-every=-XYZ'/,
  });
  cases.push({
    family: 'train --checkpoint-every without a value',
    args: train('--checkpoint-every'),
    code: 1,
    line: /^mw train: Option '--checkpoint-every <value>' argument missing/,
  });

  // Checkpoint pairs: NAME.safetensors with NAME.optim.safetensors beside it.
  const weights = initWeights(TINY, 4);
  const pair = (name: string, files: { weights: Uint8Array; optimizer: Uint8Array | string | null }) => {
    const path = file(`${name}.safetensors`, files.weights);
    if (typeof files.optimizer === 'string') mkdirSync(join(TMP, `${name}.optim.safetensors`), { recursive: true });
    else if (files.optimizer) file(`${name}.optim.safetensors`, files.optimizer);
    return path;
  };
  const good = saveCheckpointPair(weights, adamState(TINY, 4, 0.1));
  const other = saveCheckpointPair(initWeights(TINY, 5), adamState(TINY, 3, 0.2));
  const nanMoment = adamState(TINY, 4, 0.1);
  nanMoment.v.get('h.0.attn.c_proj.weight')![3] = NaN;
  const refused: [string, { weights: Uint8Array; optimizer: Uint8Array | string | null }, RegExp][] = [
    [
      'mixed',
      { weights: good.weights, optimizer: other.optimizer },
      /mixed\.optim\.safetensors: checkpoint: the optimizer state \(step 3\) was saved with other weights \(weights_sha256 differs\): a mixed pair/,
    ],
    [
      'mixed-legacy',
      { weights: good.weights, optimizer: saveOptimizerState(TINY, adamState(TINY, 3, 0.1)) },
      /mixed-legacy\.optim\.safetensors: checkpoint: the optimizer state is at step 3, the weights at step 4: a mixed pair/,
    ],
    ['optimizer-folder', { weights: good.weights, optimizer: 'folder' }, /optimizer-folder\.optim\.safetensors: not a file$/],
    [
      'optimizer-truncated',
      { weights: good.weights, optimizer: good.optimizer.subarray(0, good.optimizer.length - 100) },
      /optimizer-truncated\.optim\.safetensors: .*truncated/,
    ],
    [
      'optimizer-nan',
      saveCheckpointPair(weights, nanMoment),
      /optimizer-nan\.optim\.safetensors: checkpoint: tensor v\.transformer\.h\.0\.attn\.c_proj\.weight holds NaN at index 3/,
    ],
    [
      'weights-nan',
      { weights: new Uint8Array(readFileSync(nanWeightsFile())), optimizer: good.optimizer },
      /weights-nan\.safetensors: checkpoint: tensor transformer\.wte\.weight holds NaN/,
    ],
  ];
  for (const [name, files, line] of refused)
    cases.push({ family: `train --ckpt-in: ${name} pair`, args: train('--ckpt-in', pair(name, files)), code: 2, line });
  cases.push({
    family: 'train --ckpt-in: missing',
    args: train('--ckpt-in', join(TMP, 'none.safetensors')),
    code: 2,
    line: /none\.safetensors: no such file$/,
  });
  cases.push({ family: 'train --ckpt-in: a folder', args: train('--ckpt-in', join(TMP, 'a-folder')), code: 2, line: /a-folder: not a file$/ });
  cases.push({
    family: 'train --ckpt-in with --config',
    args: train('--ckpt-in', join(TMP, 'mixed.safetensors'), '--config', 'tiny'),
    code: 1,
    line: /--config does not go with --ckpt-in/,
  });
  return cases;
}

/** `mw experiment`: refused before the GPU starts. */
function experimentCases(): Case[] {
  const matrix = (...extra: string[]) => ['experiment', 'matrix', '--out', join(TMP, 'matrix'), '--quick', ...extra];
  return [
    { family: 'experiment without a subcommand', args: ['experiment'], code: 1, line: /^mw experiment: missing subcommand \(matrix, learning\)/ },
    { family: 'experiment bogus', args: ['experiment', 'bogus', '--out', join(TMP, 'matrix')], code: 1, line: /^mw experiment: unknown subcommand "bogus"/ },
    {
      family: 'experiment --out onto a file',
      args: ['experiment', 'matrix', '--out', WORKED, '--quick'],
      code: 1,
      line: /^mw experiment: --out .* is a file; give a folder/,
    },
    {
      family: 'experiment --out below a file',
      args: ['experiment', 'matrix', '--out', join(WORKED, 'sub'), '--quick'],
      code: 1,
      line: /^mw experiment: --out .*: a folder on its path is a file/,
    },
    { family: 'experiment --steps 0', args: matrix('--steps', '0'), code: 1, line: /--steps must be an integer ≥ 1/ },
    { family: 'experiment --editors bogus', args: matrix('--editors', 'none,bogus'), code: 1, line: /unknown --editors entry "bogus"/ },
    { family: 'experiment --methods bogus', args: matrix('--methods', 'bogus'), code: 1, line: /unknown --methods entry "bogus"/ },
    { family: 'experiment --env bogus', args: matrix('--env', 'bogus'), code: 1, line: /--env: unknown environment "bogus"/ },
    { family: 'experiment --lr NaN', args: matrix('--lr', 'NaN'), code: 1, line: /--lr must be a number ≥ 0/ },
    { family: 'experiment --top-p 2', args: matrix('--top-p', '2'), code: 1, line: /--top-p must be a number in \[0, 1\]/ },
    { family: 'experiment --ckpt missing', args: matrix('--ckpt', join(TMP, 'none.safetensors')), code: 2, line: /none\.safetensors: no such file$/ },
    { family: 'experiment --ckpt NaN weights', args: matrix('--ckpt', nanWeightsFile()), code: 2, line: /holds NaN/ },
    {
      family: 'experiment --ckpt absurd metadata',
      args: matrix('--ckpt', join(TMP, 'absurd-n_layer.safetensors')),
      code: 2,
      line: /checkpoint: config out of bounds: n_layer/,
    },
  ];
}

async function inPool<T, R>(items: readonly T[], width: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]);
      }
    }),
  );
  return out;
}

/** Each family its own test, so that one slow family does not fail the others; each input keeps its 30 s and 500 MB. */
const FAMILIES: [string, () => Case[]][] = [
  ['rollout and checkpoint files, paths', fileCases],
  ["sizes past a call's argument limit", scaleCases],
  ['export', exportCases],
  ['Claude Code sessions', agentSessionCases],
  ['turn dumps', turnsCases],
  ['tokenizers', tokenizerCases],
  ['train', trainCases],
  ['experiment', experimentCases],
  ['outputs, sizes and long GPT-2 text (issue 31)', reliabilityCases],
];

describe('mw under hostile input', () => {
  it.each(FAMILIES)(
    '%s: every bad input refused with its exit code and one stderr line, in 30 s and 500 MB; the rest accepted unchanged',
    async (_, generate) => {
      const cases = generate();
      const outcomes = await inPool(cases, 2, (c) => mw(c.args));
      const expected = await inPool(
        cases.filter((c) => c.same),
        2,
        (c) => mw(c.same!),
      );
      let e = 0;
      const failures: string[] = [];
      cases.forEach((c, i) => {
        const o = outcomes[i];
        const what = `${c.family}: mw ${c.args.map((a) => (a.length > 60 ? `${a.slice(0, 57)}...` : a)).join(' ')}`;
        const check = (ok: boolean, why: string) => ok || failures.push(`${what}: ${why} (exit ${o.code}, stderr ${JSON.stringify(o.stderr.slice(0, 300))})`);
        check(o.code === c.code, `exit ${o.code}, expected ${c.code}`);
        check(!/\n\s+at /.test(o.stderr), 'a stack trace');
        check(o.ms < LIMIT_MS, `${o.ms} ms`);
        check(o.maxRssKB < LIMIT_KB, `peak RSS ${Math.round(o.maxRssKB / 1024)} MB`);
        if (c.code !== 0) {
          check(o.stdout === '', 'output on stdout');
          check(o.stderr.endsWith('\n') && o.stderr.indexOf('\n') === o.stderr.length - 1, 'not exactly one stderr line');
          if (c.line) check(c.line.test(o.stderr.trimEnd()), `line does not match ${c.line}`);
        }
        if (c.same) check(o.stdout === expected[e++].stdout, 'output differs from the same input without the hostile part');
      });
      const worst = outcomes.reduce((w, o) => ({ ms: Math.max(w.ms, o.ms), kb: Math.max(w.kb, o.maxRssKB) }), { ms: 0, kb: 0 });
      console.log(`${cases.length} hostile cases: slowest ${worst.ms} ms, largest peak RSS ${Math.round(worst.kb / 1024)} MB`);
      for (const [i, c] of cases.entries()) console.log(`  ${c.family}: exit ${outcomes[i].code} ${outcomes[i].stderr.trimEnd().slice(0, 140)}`);
      expect(failures).toEqual([]);
    },
    400_000,
  );

  it('leaves no output behind: no .partial, nothing in a folder named as --out, no output of a refused command', () => {
    expect(readdirSync(TMP).filter((f) => f.endsWith('.partial'))).toEqual([]);
    expect(readdirSync(TMP).filter((f) => f.startsWith('rel-') && /\.(safetensors|out\.jsonl)$/.test(f) && f !== 'rel-long-line.out.jsonl')).toEqual([]);
    expect(readdirSync(join(TMP, 'a-folder'))).toEqual([]);
    expect(
      readdirSync(TMP).filter((f) => f === 'matrix' || f.startsWith('trained.') || f === 'batch.safetensors' || f === 't.jsonl' || /^turns-\d+\.out/.test(f)),
    ).toEqual([]);
  });

  it('keeps a top-level __proto__ through mw import', async () => {
    const out = join(TMP, 'proto.out.jsonl');
    const input = file('proto.json', JSON.stringify(worked()).replace(/^\{/, '{"__proto__":{"polluted":true},'));
    const run = await mw(['import', input, '--out', out]);
    expect(run.code).toBe(0);
    const back = JSON.parse(readFileSync(out, 'utf8'));
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    // biome-ignore lint/complexity/useLiteralKeys lint/suspicious/noProto: the key as parsed from JSON (an own property) is what is checked
    expect(back['__proto__']).toEqual({ polluted: true });
  });
});
