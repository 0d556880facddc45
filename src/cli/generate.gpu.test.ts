// `mw generate` as a user runs it (`node bin/mw.js generate ...` in a subprocess): the file it
// writes validates, is reproducible from its seed, and its recorded logprobs are the model's own
// live-prefix scores (re-scored here, on the GPU, with the same weights); errors keep the exit codes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { createGpuModel } from '../gpu/model';
import { scorePlan } from '../gpu/score';
import { MODEL_PRESETS } from '../model/config';
import { initWeights, type ModelWeights } from '../model/params';
import { parseRolloutFile } from '../rollout/parse';
import { deriveTree } from '../tree/derive';
import { buildPlan } from '../plan/build';
import { randomWeights } from '../model/random-weights';
import { expectClose } from '../testing/close';
import { mw as run, tmpDir, writeCheckpoint } from './subprocess.testing';

const TMP = tmpDir('generate');
const mw = (...args: string[]) => run(['generate', ...args]);

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

/** Every target of the rollouts in `file` that fit the model, scored on its live prefix (logit-tree) with `weights`, against its recorded logprob. */
async function rescore(file: string, weights: ModelWeights): Promise<{ got: number[]; recorded: number[] }> {
  const model = createGpuModel(gpu, weights);
  const got: number[] = [];
  const recorded: number[] = [];
  for (const rollout of parseRolloutFile(readFileSync(file, 'utf8'), file)) {
    const tree = deriveTree(rollout);
    if (tree.branches.some((b) => b.length > weights.config.nPositions)) continue;
    for (const t of (await scorePlan(model, buildPlan(tree, 'logit-tree'))).targets) {
      got.push(t.logprob);
      recorded.push(rollout.logprobs[t.id]);
    }
  }
  model.destroy();
  return { got, recorded };
}

describe('mw generate', () => {
  it('writes validated rollouts of the random-weight model, reproducible from the seed, whose logprobs are the model live-prefix scores', async () => {
    const out = join(TMP, 'random.jsonl');
    const args = ['--env', 'lookup', '--editor', 'compact', '--n', '3', '--seed', '2', '--config', 'tiny', '--temperature', '0.8', '--out', out];
    const run = await mw(...args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('no --ckpt: random init gpt2, seed 2 (tiny: V 272, C 32, 2 layers, 2 heads, P 128); actions are noise');
    expect(run.stderr).toMatch(/3\/3 rollouts, \d+ tokens generated, [\d.]+ tokens\/s, ETA 0s/);
    const text = readFileSync(out, 'utf8');
    const rollouts = parseRolloutFile(text, out); // validates every line
    expect(rollouts).toHaveLength(3);
    expect(new Set(rollouts.map((r) => r.group)).size).toBe(3);
    expect(rollouts.every((r) => String((r.meta as { policy: string }).policy).startsWith('model gpt2(V 272, C 32'))).toBe(true);
    // A warning counts the rollouts whose branches outgrew the model (an observation after the last
    // decode: P 128 is short for lookup); rescoring skips those.
    const long = rollouts.filter((r) => deriveTree(r).branches.some((b) => b.length > MODEL_PRESETS.tiny.nPositions)).length;
    expect(long).toBe(1);
    expect(run.stderr).toContain(`warning: 1 rollouts have a branch longer than the model's 128 positions`);
    const { got, recorded } = await rescore(out, initWeights(MODEL_PRESETS.tiny, 2));
    expect(got.length).toBeGreaterThan(50);
    expectClose(got, recorded, { abs: 1e-4, label: 'logit-tree scores vs recorded logprobs' });

    const again = join(TMP, 'again.jsonl');
    expect((await mw(...args.slice(0, -1), again)).code).toBe(0);
    expect(readFileSync(again, 'utf8')).toBe(text);
  });

  it('loads a checkpoint, and writes the expert policy data without a GPU model', async () => {
    const weights = randomWeights(MODEL_PRESETS.tiny, 3);
    const ckpt = writeCheckpoint(join(TMP, 'model.safetensors'), weights);
    const out = join(TMP, 'ckpt.jsonl');
    const run = await mw(
      '--env',
      'lookup',
      '--editor',
      'window',
      '--n',
      '1',
      '--group',
      '2',
      '--seed',
      '8',
      '--ckpt',
      ckpt,
      '--temperature',
      '0.7',
      '--out',
      out,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`checkpoint ${ckpt} (V 272, C 32, 2 layers, 2 heads, P 128)`);
    const { got, recorded } = await rescore(out, weights);
    expect(got.length).toBeGreaterThan(40);
    expectClose(got, recorded, { abs: 1e-4, label: 'checkpoint model: scores vs recorded logprobs' });

    const expert = join(TMP, 'expert.jsonl');
    const e = await mw('--policy', 'expert', '--env', 'lookup', '--editor', 'compact', '--n', '3', '--seed', '1', '--out', expert);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stderr).not.toContain('adapter');
    const rollouts = parseRolloutFile(readFileSync(expert, 'utf8'), expert);
    expect(rollouts.map((r) => r.reward)).toEqual([1, 1, 1]);
    expect(rollouts.some((r) => r.events.some((ev) => ev.op === 'edit'))).toBe(true);
  });

  it('keeps the exit-code contract: usage 1, an invalid checkpoint 2 with one stderr line, no output file', async () => {
    const out = join(TMP, 'never.jsonl');
    const base = ['--env', 'lookup', '--editor', 'compact', '--n', '1', '--seed', '1', '--out', out];
    for (const [args, message] of [
      [base.filter((a) => a !== '--out' && a !== out), '--out FILE.jsonl is required'],
      [[...base, '--temperature=-1'], '--temperature must be a number ≥ 0'],
      [[...base, '--config', 'tiny', '--ckpt', 'x.safetensors'], '--config does not go with --ckpt'],
      [[...base, '--policy', 'expert', '--top-k', '3'], '--top-k applies to the model policy'],
      [['--env', 'lookup', '--editor', 'none', '--budget', '10', '--n', '1', '--seed', '1', '--out', out], 'editor none has no budget'],
    ] as const) {
      const run = await mw(...args);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr).toContain(message);
    }
    const missing = join(TMP, 'missing.safetensors');
    const bad = join(TMP, 'bad.safetensors');
    writeFileSync(bad, 'not a checkpoint');
    for (const [file, reason] of [
      [missing, 'no such file'],
      [bad, 'safetensors'],
    ] as const) {
      const run = await mw(...base, '--ckpt', file);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(new RegExp(`^${file}: .*${reason}`, 'i'));
    }
    expect(existsSync(out)).toBe(false);
  });
});
