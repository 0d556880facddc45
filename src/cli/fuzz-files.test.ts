// `mw` fuzz, files and paths: nesting, huge values, NaN weights, absurd metadata, BOMs, bad paths and an
// over-long rollout, for tree, plan, import, score, drift and verify (the harness: fuzz.testing.ts).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { saveCheckpoint } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights } from '../model/params';
import { createRng } from '../rollout/generate-random';
import { WORKED } from './subprocess.testing';
import { type Case, TINY, TMP, aFolder, absurdCheckpoint, deepArray, deepObject, file, fuzzFamily, mw, withDeepEvent, worked } from './fuzz.testing';

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
        ? withDeepEvent(base, depth)
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
      `${base}\n${base.replace('"worked-example"', '"w2"')}\n${withDeepEvent(base.replace('"worked-example"', '"w3"'), depth)}\n`,
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
  for (const [name, claim] of claims) {
    const path = absurdCheckpoint(name, claim);
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
  const folder = aFolder();
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
    // mw score and mw drift score a long rollout as far as the model reaches; mw verify still needs every position.
    args: ['verify', long, '--ckpt', ckpt, '--json'],
    code: 2,
    line: /long\.json: rollout "long": logit-tree needs 3000002 positions, the model has 16$/,
  });
  return cases;
}

fuzzFamily('rollout and checkpoint files, paths', fileCases, (f) => /^deep-.*\.out\.jsonl$/.test(f));

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
