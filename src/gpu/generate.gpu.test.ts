// Incremental decoding with a KV cache against the full forward: every logprob recorded at decode
// time equals the full forward over the same live prefix; prefix reuse after an edit equals
// recomputing; sampling is seeded and honours temperature and top-k; and a whole model-policy
// episode under compaction replays exactly through the conditioning tree (logit-tree, packed-4d).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from './runtime/device';
import { readFloat32 } from './runtime/buffers';
import { createForward, createGpuModel, type GpuModel } from './model';
import { scoreBatch, scorePlan } from './score';
import { createDecoder, createGpuModelPolicy, gpuLanguageModel } from './generate';
import { MODEL_PRESETS, type ModelConfig } from '../model/config';
import type { ModelWeights } from '../model/params';
import { createModelPolicy, logSoftmax, sampleToken } from '../harness/policies/model';
import { createEditor, editorSpec } from '../harness/editors';
import { createLookupEnv } from '../harness/env/lookup';
import { runEpisode } from '../harness/episode';
import { verifyEpisode } from '../harness/verify';
import { promptTokens } from '../harness/framing';
import { NEWLINE } from '../harness/policy';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { buildPlan } from '../plan/build';
import { randomWeights } from '../model/random-weights';
import { expectClose } from '../testing/close';
import { createRng } from '../util/prng';

const config: ModelConfig = MODEL_PRESETS.tiny; // P = 128
const V = config.vocabSize;

/**
 * Random weights whose head favours `\n` by `boost` nats: ln_f.bias += boost·wte[\n] / |wte[\n]|²
 * raises that logit by exactly `boost` (the head is tied), so actions end after a few tokens and
 * episodes run several turns, with edits, instead of one truncated action.
 */
function stopBiased(weights: ModelWeights, boost: number): ModelWeights {
  const C = weights.config.nEmbd;
  const wte = weights.tensors.get('wte.weight')!;
  const bias = weights.tensors.get('ln_f.bias')!;
  let norm2 = 0;
  for (let c = 0; c < C; c++) norm2 += wte[NEWLINE * C + c] ** 2;
  for (let c = 0; c < C; c++) bias[c] += (boost * wte[NEWLINE * C + c]) / norm2;
  return weights;
}

let gpu: Gpu;
let model: GpuModel;
let stopModel: GpuModel;
/**
 * Tiny with 256 positions for the episode: a branch is the view before an edit (the view the
 * budget trigger saw, observation included), which must fit the model for logit-tree to score it.
 */
const episodeConfig: ModelConfig = { ...config, nPositions: 256 };
beforeAll(async () => {
  gpu = await createGpu();
  model = createGpuModel(gpu, randomWeights(config, 11));
  stopModel = createGpuModel(gpu, stopBiased(randomWeights(episodeConfig, 7), 5));
});
afterAll(() => {
  model?.destroy();
  stopModel?.destroy();
  gpu?.destroy();
});

const randomTokens = (seed: number, n: number) => {
  const rng = createRng(seed);
  return Array.from({ length: n }, () => rng.int(V));
};

/** Full forward over one causal sequence: log π(seq[i] | seq[0..i)) for i in [from, n). */
async function fullScores(m: GpuModel, seq: readonly number[], from: number): Promise<Float32Array> {
  const n = seq.length;
  const targets = Array.from({ length: n - from }, (_, j) => ({ predictor: from + j - 1, token: seq[from + j] }));
  return scoreBatch(m, { tokens: seq, positions: seq.map((_, i) => i), end: seq.map(() => n), targets });
}

/** Full forward logits (n, V) of one causal sequence. */
async function fullLogits(m: GpuModel, seq: readonly number[]): Promise<Float32Array> {
  const n = seq.length;
  const forward = createForward(m, { tokens: seq, positions: seq.map((_, i) => i), end: seq.map(() => n) });
  const encoder = gpu.device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  forward.encode(pass);
  pass.end();
  gpu.device.queue.submit([encoder.finish()]);
  const out = await readFloat32(gpu.device, forward.logits, n * V);
  forward.destroy();
  return out;
}

const row = (logits: Float32Array, i: number) => logits.subarray(i * V, (i + 1) * V);
const argmax = (a: ArrayLike<number>) => {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
};

describe('createDecoder (KV cache)', () => {
  // Blocks of new rows take attention_decode or the flash kernel (auto: by cost); pin each path.
  for (const attention of ['auto', 'decode', 'flash'] as const) {
    it(`records at decode time the logprobs of a full forward over the same live prefix (≤ 1e-5), through prefill, one-row steps and a chunk (attention ${attention})`, async () => {
      const decoder = createDecoder(model, { attention });
      const rng = createRng(3);
      const seq = randomTokens(1, 21);
      const recorded: number[] = [];
      let logits = await decoder.reset(seq);
      for (let i = 0; i < 40; i++) {
        const token = sampleToken(logits, {}, rng);
        recorded.push(logSoftmax(logits)[token]);
        seq.push(token);
        // A chunk of seven given tokens in the middle (M > 1 at start > 0): their logprobs are not recorded.
        if (i === 20) {
          const chunk = randomTokens(2, 7);
          logits = await decoder.extend([token, ...chunk]);
          seq.push(...chunk);
          recorded.push(...chunk.map(() => NaN));
        } else logits = await decoder.extend([token]);
      }
      expect(decoder.length).toBe(seq.length);
      expect(decoder.tokens).toEqual(seq);
      const want = await fullScores(model, seq.slice(0, 21 + recorded.length), 21);
      const sampled = recorded.flatMap((lp, j) => (Number.isNaN(lp) ? [] : [[lp, want[j]]]));
      expect(sampled).toHaveLength(40);
      expectClose(
        sampled.map((p) => p[0]),
        sampled.map((p) => p[1]),
        { abs: 1e-5, label: 'decode-time logprob vs full forward' },
      );
      // And the whole last logits row, not only the sampled entries.
      expectClose(logits, row(await fullLogits(model, seq), seq.length - 1), { abs: 1e-5, label: 'last-row logits' });
      expect(decoder.stats.rows).toBe(seq.length);
      decoder.destroy();
    });

    it(`after an edit keeps the rows below the first change and equals recomputing from scratch (≤ 1e-5) (attention ${attention})`, async () => {
      const decoder = createDecoder(model, { attention });
      const before = randomTokens(4, 90);
      await decoder.reset(before);
      // The edit: keep 0..29, insert 12 new tokens, keep 60..89 (positions shift down by 18).
      const after = [...before.slice(0, 30), ...randomTokens(5, 12), ...before.slice(60)];
      expect(after[30]).not.toBe(before[30]);
      const rowsBefore = decoder.stats.rows;
      // sync finds the first change itself (by token value), as after onEdit(view, 30).
      let reused = await decoder.sync(after);
      expect(decoder.stats.rows - rowsBefore).toBe(after.length - 30);
      const fresh = createDecoder(model);
      let scratch = await fresh.reset(after);
      expectClose(reused, scratch, { abs: 1e-5, label: 'logits after prefix reuse vs from scratch' });
      expectClose(reused, row(await fullLogits(model, after), after.length - 1), { abs: 1e-5, label: 'logits after prefix reuse vs full forward' });
      // Decode on from both: same logprobs, equal to the full forward's.
      const rng = createRng(9);
      const seq = after.slice();
      const got: number[] = [];
      for (let i = 0; i < 12; i++) {
        const token = sampleToken(reused, {}, rng);
        got.push(logSoftmax(reused)[token]);
        expectClose([logSoftmax(scratch)[token]], [got[i]], { abs: 1e-5, label: `step ${i}: reused vs scratch` });
        seq.push(token);
        reused = await decoder.extend([token]);
        scratch = await fresh.extend([token]);
      }
      expectClose(got, await fullScores(model, seq, after.length), { abs: 1e-5, label: 'logprobs after the edit vs full forward' });
      // sync on an unchanged view recomputes only its last row; on a shorter view, only from the change.
      const rows = decoder.stats.rows;
      expectClose(await decoder.sync(seq), reused, { abs: 1e-6, label: 'sync on the cached view' });
      expect(decoder.stats.rows - rows).toBe(1);
      decoder.destroy();
      fresh.destroy();
    });
  }

  it('refuses a view longer than the model positions with a clear error, and keeps the cache usable', async () => {
    const decoder = createDecoder(model);
    const P = config.nPositions;
    await expect(decoder.reset(randomTokens(6, P + 1))).rejects.toThrow(`would hold ${P + 1} tokens, more than the model's ${P} positions`);
    await expect(decoder.sync(randomTokens(6, P + 1))).rejects.toThrow(`longer than the model's ${P} positions`);
    await decoder.reset(randomTokens(6, P));
    await expect(decoder.extend([1])).rejects.toThrow(`would hold ${P + 1} tokens`);
    await expect(decoder.extend([V])).rejects.toThrow(`token ${V} is outside the vocabulary`);
    expect(decoder.length).toBe(P);
    decoder.destroy();
    await expect(decoder.extend([1])).rejects.toThrow('after destroy');
  });
});

describe('the model policy', () => {
  const view = promptTokens('Q: who is the boss of the boss of ann?');
  const info = { env: 'lookup', editor: editorSpec('none'), seed: 5 };
  const act = async (options: Parameters<typeof createGpuModelPolicy>[1], seed = 5, m = model) => {
    const session = await createGpuModelPolicy(m, options).start({ ...info, seed });
    const action = await session.act({ view, maxTokens: 24 });
    await session.close?.();
    return action;
  };

  it('gives the same tokens for the same seed and other tokens for another seed', async () => {
    const a = await act({});
    const b = await act({});
    const c = await act({}, 6);
    expect(a.tokens.length).toBeGreaterThan(3);
    expect(b).toEqual(a);
    expect(c.tokens).not.toEqual(a.tokens);
  });

  it('top-k = 1 and temperature 0 are greedy: the argmax of the full forward at every step', async () => {
    const greedy = await act({ topK: 1 });
    expect(await act({ temperature: 0 })).toEqual(greedy);
    expect(await act({ topK: 1 }, 77)).toEqual(greedy); // no randomness left
    const logits = await fullLogits(model, [...view, ...greedy.tokens]);
    greedy.tokens.forEach((token, i) => expect(token).toBe(argmax(row(logits, view.length - 1 + i))));
    // The recorded logprob is the model's (temperature 1), not the greedy sampler's 0.
    expectClose(greedy.logprobs, await fullScores(model, [...view, ...greedy.tokens], view.length), { abs: 1e-5, label: 'greedy logprobs' });
    expect(Math.max(...greedy.logprobs)).toBeLessThan(-0.5);
  });

  it('top-k = 3 samples only among the 3 most likely tokens of the full forward, all three of them', async () => {
    let steps = 0;
    const picked = new Set<number>();
    for (let seed = 0; seed < 4; seed++) {
      const action = await act({ topK: 3 }, seed);
      const logits = await fullLogits(model, [...view, ...action.tokens]);
      action.tokens.forEach((token, i) => {
        const r = row(logits, view.length - 1 + i);
        const above = Array.from(r).filter((v) => v > r[token]).length;
        expect(above).toBeLessThan(3);
        picked.add(above);
        steps++;
      });
    }
    expect(steps).toBeGreaterThan(30);
    expect(picked.size).toBe(3); // ranks 0, 1 and 2 all occur
  });

  it('recomputes the same action whatever the cache reuse (prefix, appends, none)', async () => {
    const lm = gpuLanguageModel(model);
    const actions = [];
    for (const reuse of ['prefix', 'appends', 'none'] as const) {
      const session = await createModelPolicy(lm, { reuse }).start(info);
      actions.push(await session.act({ view, maxTokens: 10 }));
      await session.close?.();
    }
    expect(actions[1].tokens).toEqual(actions[0].tokens);
    expect(actions[2].tokens).toEqual(actions[0].tokens);
    expectClose(actions[2].logprobs, actions[0].logprobs, { abs: 1e-5, label: 'no cache vs prefix cache' });
  });

  it('runs a lookup episode under compaction whose recorded logprobs equal the logit-tree and packed-4d scores (≤ 1e-4)', async () => {
    const env = createLookupEnv();
    const editor = createEditor(editorSpec('compact', { budget: 150, keepTurns: 1 }));
    const policy = createGpuModelPolicy(stopModel, {});
    // Room after the last decode for an observation (41 tokens for a malformed action).
    const result = await runEpisode(env, editor, policy, 0, { maxContext: episodeConfig.nPositions - 56, maxActTokens: 40 });
    const check = verifyEpisode(result); // validates, and every target's live prefix is the view it was decoded from
    expect(result.K).toBeGreaterThanOrEqual(2);
    expect(check.targets).toBeGreaterThan(20);
    const tree = deriveTree(validateRollout(result.rollout, { file: 'episode' }));
    expect(tree.divergingLeaves.length).toBeGreaterThan(0);
    const recorded = new Map<number, number>();
    tree.targets.forEach((id) => recorded.set(id, tree.rollout.logprobs[id]));
    for (const method of ['logit-tree', 'packed-4d'] as const) {
      const scored = (await scorePlan(stopModel, buildPlan(tree, method))).targets;
      expect(scored).toHaveLength(tree.targets.length);
      expectClose(
        scored.map((t) => t.logprob),
        scored.map((t) => recorded.get(t.id)!),
        { abs: 1e-4, label: `${method} vs rollout logprobs` },
      );
    }
    // The naive replays do not agree: that is the drift the exact methods remove.
    const compressed = (await scorePlan(stopModel, buildPlan(tree, 'naive-compressed'))).targets;
    const drift = Math.max(...compressed.map((t) => Math.abs(t.logprob - recorded.get(t.id)!)));
    expect(drift).toBeGreaterThan(1e-2);
  });
});
