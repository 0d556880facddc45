// `mw drift` of a GPT-2 model on a real agent-CLI session, end to end: the log imported with
// --tokenizer gpt2, a published-layout checkpoint of vocabulary 50257 (random weights), every
// method's drift, and progress on stderr only when asked (the one-line error contract holds).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../plan/build';
import { GPT2_VOCAB } from '../rollout/tokenizer';
import { fixturePath } from '../rollout/importers/testing';
import { loadRolloutFile } from '../rollout/parse';
import { publishedGpt2Checkpoint } from '../testing/publishedGpt2';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import type { DriftOutput } from './drift';
import { SEQUENCE_METHODS } from '../plan/types';
import { mw, tmpDir } from './subprocess.testing';

const TMP = tmpDir('drift-gpt2');
const CKPT = join(TMP, 'gpt2.safetensors');
writeFileSync(CKPT, publishedGpt2Checkpoint(randomWeights({ vocabSize: GPT2_VOCAB, nEmbd: 64, nLayer: 1, nHead: 1, nPositions: 1024 }, 4)));
const SESSION = join(TMP, 'session.jsonl');

describe('mw drift --ckpt gpt2.safetensors --rollouts session.jsonl', () => {
  it('imports the session with --tokenizer gpt2 and reports every method, with progress when asked', async () => {
    const imported = await mw(['import', fixturePath('agent-session-two-compactions.jsonl'), '--tokenizer', 'gpt2', '--out', SESSION]);
    expect(imported.code, imported.stderr).toBe(0);
    const [rollout] = (await loadRolloutFile(readFileSync(SESSION, 'utf8'), SESSION)).rollouts;
    const tree = deriveTree(rollout);
    const total = SEQUENCE_METHODS.reduce((n, m) => n + buildPlan(tree, m).sequences.reduce((k, s) => k + s.ids.length, 0), 0);

    const run = await mw(['drift', '--ckpt', CKPT, '--rollouts', SESSION, '--json', '--progress']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as DriftOutput;
    expect(report).toMatchObject({ rollouts: 1, targets: tree.figures.targets, withLogprobs: 0 });
    const m = report.methods;
    // logit-tree is the live-prefix score itself; packed-4d equals it (Theorem 1).
    expect(m['logit-tree'].conditioningDrift).toBe(0);
    expect(m['packed-4d'].conditioningDrift!).toBeLessThan(1e-4);
    expect(m['naive-compressed'].scored).toBe(tree.figures.targets - tree.figures.droppedTargets);
    // The flattened methods drift where the compactions changed what a target saw.
    expect(m['naive-compressed'].sign.conditioning.diverging).toBeGreaterThan(0);
    expect(m['naive-full'].sign.conditioning.diverging).toBeGreaterThan(0);

    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(new RegExp(`^mw drift: ${total}/${total} tokens scored in \\d+s, \\d+ tokens/s$`));
    for (const line of lines.slice(0, -1)) expect(line).toMatch(/^mw drift: \d+\/\d+ tokens scored \([a-z0-9-]+\), \d+ tokens\/s, ETA /);
  });

  it('prints nothing on stderr without --progress when stderr is not a terminal', async () => {
    const chat = join(TMP, 'chat.jsonl');
    expect((await mw(['import', fixturePath('chat.jsonl'), '--tokenizer', 'gpt2', '--out', chat])).code).toBe(0);
    const quiet = await mw(['drift', '--ckpt', CKPT, '--rollouts', chat, '--json']);
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(quiet.stdout) as DriftOutput).targets).toBeGreaterThan(0);
  });
});
