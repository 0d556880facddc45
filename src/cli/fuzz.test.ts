// The `mw` contract under hostile input, run as a user runs it (a subprocess per case): generated
// families of bad files (nesting, huge values, NaN weights, absurd metadata, BOMs, __proto__, bad
// paths, an over-long rollout). Every refusal exits 2 (1 for a usage error) with exactly one line on
// stderr, no stack trace, nothing on stdout, within 30 s and 500 MB; every accepted file gives the
// output it would give without the hostile part.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveCheckpoint } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights, parameterShapes } from '../model/params';
import { writeSafetensors } from '../util/safetensors';
import { createRng } from '../rollout/generate-random';
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
    const timer = setTimeout(() => child.kill('SIGKILL'), LIMIT_MS + 5000);
    child.on('exit', (code) => {
      clearTimeout(timer);
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

/** The cases, generated from one seed: each family several times with different values. */
function generateCases(): Case[] {
  const rng = createRng(19);
  const cases: Case[] = [];
  const ckpt = file('tiny.safetensors', saveCheckpoint(initWeights(TINY, 1)));

  // Nesting: deep values where events, pieces or kept fields go, in .json and on a JSONL line.
  const base = JSON.stringify(worked());
  for (const [depth, where] of [[5000, 0], [200_000, 1], [20_000 + rng.int(0, 1000), 2]]) {
    const text =
      where === 0
        ? base.replace(/"events":\[/, `"events":[${deepArray(depth)},`)
        : where === 1
          ? base.replace(/"view":\[/, `"view":[${deepObject(depth)},`)
          : base.replace(/^\{/, `{"meta":${deepObject(depth)},`);
    const json = file(`deep-${depth}.json`, text);
    for (const command of [['tree', json, '--json'], ['plan', json, '--method', 'packed-4d', '--json'], ['import', json, '--out', join(TMP, `deep-${depth}.out.jsonl`)], ['score', '--ckpt', ckpt, json, '--method', 'logit-tree', '--json']]) {
      cases.push({ family: `nesting ${depth}`, args: command, code: 2, line: /deep-\d+\.json: / });
    }
    if (where !== 0) continue;
    const jsonl = file(`deep-${depth}.jsonl`, `${base}\n${base.replace('"worked-example"', '"w2"')}\n${base.replace('"worked-example"', '"w3"').replace(/"events":\[/, `"events":[${deepArray(depth)},`)}\n`);
    // Streamed output starts only after every line is validated: nothing on stdout for a bad line 3.
    for (const command of [['tree', jsonl, '--json'], ['tree', jsonl, '--json', '--per-target'], ['plan', jsonl, '--method', 'sdcc', '--json']]) {
      cases.push({ family: `nesting ${depth} on line 3`, args: command, code: 2, line: /deep-\d+\.jsonl:3: event 0: an event must be an object, got \[\[\[/ });
    }
  }
  const chat = file('deep-chat.jsonl', `{"messages":[{"role":"user","content":"x"},{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":${deepArray(20000)}}}]}]}\n`);
  cases.push({ family: 'nesting in a chat tool call', args: ['import', chat, '--out', join(TMP, 'deep-chat.out.jsonl')], code: 2, line: /deep-chat\.jsonl: no chat conversations/ });

  // Huge values: numbers at the ends of the float range in every numeric field.
  const huge = [1e308, -1.7976931348623157e308, 2 ** 53 + 2, 1e300];
  for (let i = 0; i < 4; i++) {
    const value = huge[i];
    const r = worked();
    const field = ['token', 'vocab', 'keep', 'logprob'][i];
    if (field === 'token') (r.events as { tokens?: number[] }[])[0].tokens![0] = value;
    if (field === 'vocab') r.vocab = value;
    if (field === 'keep') ((r.events as { view?: { keep?: number[] }[] }[]).find((e) => e.view)!.view![0].keep = [0, value]);
    if (field === 'logprob') {
      const act = (r.events as { role?: string; tokens?: number[]; logprobs?: number[] }[]).find((e) => e.role === 'act')!;
      act.logprobs = act.tokens!.map(() => -value);
    }
    const path = file(`huge-${field}.json`, JSON.stringify(r));
    cases.push({ family: `huge ${field}`, args: ['tree', path, '--json'], code: field === 'logprob' && -value <= 0 ? 0 : 2, line: /huge-\w+\.json: /, same: field === 'logprob' ? ['tree', WORKED, '--json'] : undefined });
  }
  const rewards = file('huge-reward.json', JSON.stringify({ ...worked(), reward: 1.7e308 }));
  cases.push({ family: 'huge reward', args: ['tree', rewards], code: 0, same: ['tree', WORKED] }); // the figures table (--json also prints the reward)

  // NaN and infinite weights: refused at load, naming the tensor.
  for (const [bad, tensor] of [[NaN, 'wte.weight'], [Infinity, 'h.0.mlp.c_fc.weight'], [-Infinity, 'ln_f.bias']] as const) {
    const w = initWeights(TINY, 2);
    w.tensors.get(tensor)![rng.int(0, w.tensors.get(tensor)!.length - 1)] = bad;
    const path = file(`bad-${tensor}.safetensors`, saveCheckpoint(w));
    cases.push({ family: `${bad} weight`, args: ['score', '--ckpt', path, WORKED, '--method', 'packed-4d', '--json'], code: 2, line: new RegExp(`bad-.*\\.safetensors: checkpoint: tensor transformer\\.${tensor.replace(/\./g, '\\.')} holds ${bad} at index \\d+: every value must be finite$`) });
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
    const path = file(`absurd-${name}.safetensors`, writeSafetensors(parameterShapes(TINY).map(({ name: n, shape }) => ({ name: n, shape, data: tiny.tensors.get(n)! })), meta));
    cases.push({ family: `absurd ${name}`, args: ['score', '--ckpt', path, WORKED, '--method', 'logit-tree'], code: 2, line: /checkpoint: config out of bounds: / });
  }

  // Byte order marks: ignored by every reader, so the output is the same as without.
  const bom = '\ufeff';
  const jsonl = `${JSON.stringify(worked())}\n${JSON.stringify({ ...worked(), id: 'w2' })}\n`;
  const chatText = '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"}]}\n';
  for (const [name, text] of [['bom.json', JSON.stringify(worked(), null, 2)], ['bom.jsonl', jsonl], ['bom-chat.jsonl', chatText]]) {
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
  cases.push({ family: '--out in a missing folder', args: ['import', WORKED, '--out', join(TMP, 'no-such-folder', 'x.jsonl')], code: 1, line: /^mw import: --out .*: folder .* does not exist/ });
  cases.push({ family: '--out onto a folder', args: ['import', WORKED, '--out', folder], code: 1, line: /^mw import: --out .* is a folder/ });

  // An over-long rollout for the model: refused from its events, before any tree or plan is built.
  const long = file('long.json', JSON.stringify({ format: 'memorywalker.rollout/v1', id: 'long', vocab: 272, events: [{ op: 'append', role: 'prompt', text: 'p'.repeat(2_000_000) }, { op: 'append', role: 'act', text: 'a'.repeat(1_000_000) }] }));
  cases.push({ family: 'over-long rollout', args: ['score', '--ckpt', ckpt, long, '--method', 'packed-4d', '--json'], code: 2, line: /long\.json: rollout "long": packed-4d needs 3000002 positions, the model has 16$/ });
  return cases;
}

async function inPool<T, R>(items: readonly T[], width: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  }));
  return out;
}

describe('mw under hostile input', () => {
  it('refuses every bad input with its exit code and one stderr line, in 30 s and 500 MB; accepts the rest unchanged', async () => {
    const cases = generateCases();
    const outcomes = await inPool(cases, 2, (c) => mw(c.args));
    const expected = await inPool(cases.filter((c) => c.same), 2, (c) => mw(c.same!));
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
    expect(readdirSync(TMP).filter((f) => f.endsWith('.partial'))).toEqual([]);
    expect(readdirSync(join(TMP, 'a-folder'))).toEqual([]);
  }, 240_000);

  it('keeps a top-level __proto__ through mw import', async () => {
    const out = join(TMP, 'proto.out.jsonl');
    const input = file('proto.json', JSON.stringify(worked()).replace(/^\{/, '{"__proto__":{"polluted":true},'));
    const run = await mw(['import', input, '--out', out]);
    expect(run.code).toBe(0);
    const back = JSON.parse(readFileSync(out, 'utf8'));
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(back['__proto__']).toEqual({ polluted: true });
  });
});
