import { describe, expect, it } from 'vitest';
import { expectClose } from '../../testing/close';
import { type Rng, createRng } from '../../util/prng';
import type { ModelConfig } from '../config';
import { parameterShapes, shapeSize } from '../params';
import { dot, finiteDifference, randomNormal } from './gradcheck';
import { type ModelInput, type ReferenceWeights, referenceBackward, referenceForward, referenceLogprobs, sftLossAndGrads } from './model';

// Odd sizes everywhere; two heads of size 4 so the head slicing is exercised.
const CONFIG: ModelConfig = { vocabSize: 11, nEmbd: 8, nLayer: 2, nHead: 2, nPositions: 23 };
const FD = { abs: 1e-7, rel: 1e-6 };

/** Float64 weights with O(1) spread, so GELU, softmax and LayerNorm are all far from linear. */
function randomWeights(config: ModelConfig, rng: Rng): { config: ModelConfig; tensors: Map<string, Float64Array> } {
  const tensors = new Map<string, Float64Array>();
  for (const { name, shape } of parameterShapes(config)) {
    const t = randomNormal(rng, shapeSize(shape), name.endsWith('.weight') && shape.length === 2 ? 0.4 : 0.3);
    if (/ln_(\d|f)\.weight$/.test(name)) for (let i = 0; i < t.length; i++) t[i] += 1;
    tensors.set(name, t);
  }
  return { config, tensors };
}

function randomTokens(rng: Rng, n: number, V: number): number[] {
  return Array.from({ length: n }, () => rng.int(V));
}

/** docs/tree.md worked example: packed ids, depths and the trie's end[]. */
const PACKED_IDS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16];
const PACKED_POSITIONS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 3, 4, 5, 6, 7, 8, 9, 4, 5, 6, 7];
const PACKED_END = [21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21];

const INPUTS: Record<string, (rng: Rng) => ModelInput> = {
  'causal (N 7)': (rng) => ({ tokens: randomTokens(rng, 7, CONFIG.vocabSize), positions: [0, 1, 2, 3, 4, 5, 6], end: Array(7).fill(7) }),
  'packed tree (worked example, N 21)': (rng) => {
    const byId = randomTokens(rng, 17, CONFIG.vocabSize);
    return { tokens: PACKED_IDS.map((id) => byId[id]), positions: PACKED_POSITIONS, end: PACKED_END };
  },
  'block-diagonal (3, 5, 1)': (rng) => ({
    tokens: randomTokens(rng, 9, CONFIG.vocabSize),
    positions: [0, 1, 2, 0, 1, 2, 3, 4, 0],
    end: [3, 3, 3, 8, 8, 8, 8, 8, 9],
  }),
};

describe('referenceBackward', () => {
  for (const [name, makeInput] of Object.entries(INPUTS)) {
    it(`matches finite differences for every parameter: ${name}`, () => {
      const rng = createRng(100);
      const weights = randomWeights(CONFIG, rng);
      const input = makeInput(rng);
      const { logits, cache } = referenceForward(weights, input);
      const g = randomNormal(rng, logits.length);
      const grads = referenceBackward(weights, cache, g);
      expect([...grads.keys()]).toEqual(parameterShapes(CONFIG).map((p) => p.name));
      for (const [param, analytic] of grads) {
        const value = weights.tensors.get(param)!;
        const numeric = finiteDifference(() => dot(referenceForward(weights, input).logits, g), value);
        expectClose(analytic, numeric, { ...FD, label: `d ${param}` });
      }
    });
  }

  it('of the SFT loss matches finite differences (targets sharing a predictor row included)', () => {
    const rng = createRng(101);
    const weights = randomWeights(CONFIG, rng);
    const input = INPUTS['packed tree (worked example, N 21)'](rng);
    const targets = [
      { predictor: 1, token: input.tokens[2] },
      { predictor: 15, token: input.tokens[16] },
      { predictor: 19, token: input.tokens[20] },
      { predictor: 19, token: 3 },
    ];
    const { loss, logprobs, grads } = sftLossAndGrads(weights, input, targets);
    expect(loss).toBeCloseTo(-logprobs.reduce((a, b) => a + b, 0) / targets.length, 14);
    expect(Array.from(logprobs)).toEqual(Array.from(referenceLogprobs(weights, input, targets)));
    for (const [param, analytic] of grads) {
      const numeric = finiteDifference(() => sftLossAndGrads(weights, input, targets).loss, weights.tensors.get(param)!);
      expectClose(analytic, numeric, { ...FD, label: `d loss / d ${param}` });
    }
  });

  it('gives loss 0 and zero gradients when there is no target', () => {
    const rng = createRng(102);
    const { loss, grads } = sftLossAndGrads(randomWeights(CONFIG, rng), INPUTS['causal (N 7)'](rng), []);
    expect(loss).toBe(0);
    for (const [name, g] of grads)
      expect(
        g.every((v) => v === 0),
        name,
      ).toBe(true);
  });
});

describe('referenceForward', () => {
  it('is causal: logits before an index do not depend on tokens at or after it', () => {
    const rng = createRng(103);
    const weights = randomWeights(CONFIG, rng);
    const input = INPUTS['causal (N 7)'](rng);
    const a = referenceForward(weights, input).logits;
    const tokens = Array.from(input.tokens);
    tokens[4] = (tokens[4] + 1) % CONFIG.vocabSize;
    const b = referenceForward(weights, { ...input, tokens }).logits;
    const V = CONFIG.vocabSize;
    expect(Array.from(b.subarray(0, 4 * V))).toEqual(Array.from(a.subarray(0, 4 * V)));
    expect(Array.from(b.subarray(4 * V, 5 * V))).not.toEqual(Array.from(a.subarray(4 * V, 5 * V)));
  });

  it('block-diagonal packing equals running each sequence alone (varlen batching)', () => {
    const rng = createRng(104);
    const weights = randomWeights(CONFIG, rng);
    const packed = INPUTS['block-diagonal (3, 5, 1)'](rng);
    const whole = referenceForward(weights, packed).logits;
    const V = CONFIG.vocabSize;
    for (const [start, n] of [
      [0, 3],
      [3, 5],
      [8, 1],
    ]) {
      const alone = referenceForward(weights, {
        tokens: Array.from(packed.tokens).slice(start, start + n),
        positions: Array.from({ length: n }, (_, i) => i),
        end: Array(n).fill(n),
      }).logits;
      expectClose(whole.subarray(start * V, (start + n) * V), alone, { abs: 1e-13, label: `sequence at ${start}` });
    }
  });

  it('rejects malformed inputs with the offending index', () => {
    const weights = randomWeights(CONFIG, createRng(105));
    expect(() => referenceForward(weights, { tokens: [1, 11], positions: [0, 1], end: [2, 2] })).toThrow('token 11 at index 1 outside [0, 11)');
    expect(() => referenceForward(weights, { tokens: [1, 2], positions: [0, 23], end: [2, 2] })).toThrow('position 23 at index 1 outside [0, 23)');
    expect(() => referenceForward(weights, { tokens: [1, 2], positions: [0, 1], end: [3, 2] })).toThrow('end[0] = 3 outside [0, 2]');
    expect(() => referenceForward(weights, { tokens: [1, 2], positions: [0], end: [2, 2] })).toThrow('2 tokens, 1 positions, 2 end entries');
    expect(() => referenceLogprobs(weights, { tokens: [1, 2], positions: [0, 1], end: [2, 2] }, [{ predictor: 2, token: 0 }])).toThrow(
      'target 0: predictor 2 outside [0, 2)',
    );
    const missing: ReferenceWeights = { config: CONFIG, tensors: new Map([...weights.tensors].filter(([n]) => n !== 'h.1.mlp.c_fc.bias')) };
    expect(() => referenceForward(missing, { tokens: [1], positions: [0], end: [1] })).toThrow('missing tensor h.1.mlp.c_fc.bias');
  });
});

// Theorem 1 on the CPU: the worked example (docs/tree.md), tokens by hand from worked-example.json.
describe('Theorem 1 (worked example): packed 4D forward = one causal sequence per branch', () => {
  // Token value of each physical id 0..16 (prompt, act, obs, act, summary, obs, act, act).
  const TOKEN = [10, 11, 20, 21, 30, 31, 32, 22, 23, 40, 41, 33, 34, 24, 25, 26, 27];
  const BRANCHES = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
    [0, 1, 9, 10, 7, 8, 11, 12, 13, 14],
    [0, 1, 9, 10, 13, 14, 15, 16],
  ];
  // Each target: its branch, its index in that branch, its packed index (its own branch's node).
  const TARGETS = [
    { id: 2, branch: 0, index: 2, packed: 2 },
    { id: 3, branch: 0, index: 3, packed: 3 },
    { id: 7, branch: 0, index: 7, packed: 7 },
    { id: 8, branch: 0, index: 8, packed: 8 },
    { id: 13, branch: 1, index: 8, packed: 15 },
    { id: 14, branch: 1, index: 9, packed: 16 },
    { id: 15, branch: 2, index: 6, packed: 19 },
    { id: 16, branch: 2, index: 7, packed: 20 },
  ];
  const config: ModelConfig = { vocabSize: 272, nEmbd: 16, nLayer: 2, nHead: 2, nPositions: 16 };
  const weights = randomWeights(config, createRng(200));
  const packedInput = { tokens: PACKED_IDS.map((id) => TOKEN[id]), positions: PACKED_POSITIONS, end: PACKED_END };
  // In the packed tree the predictor is the parent node: the previous packed index on the path.
  const parent = (i: number) => {
    for (let k = i - 1; k >= 0; k--) if (k <= i && i < PACKED_END[k]) return k;
    throw new Error(`no parent for ${i}`);
  };
  const packedTargets = TARGETS.map((t) => ({ predictor: parent(t.packed), token: TOKEN[t.id] }));
  const causal = (ids: number[]) => ({ tokens: ids.map((id) => TOKEN[id]), positions: ids.map((_, i) => i), end: ids.map(() => ids.length) });

  it('the packed predictors are the expected tree parents', () => {
    // Target 13 (packed 15) is predicted by 12 at packed 14; target 15 (packed 19) by 14′ at 18.
    expect(packedTargets.map((t) => t.predictor)).toEqual([1, 2, 6, 7, 14, 15, 18, 19]);
    expect(PACKED_IDS.filter((_, i) => packedTargets.some((t) => t.predictor === i))).toEqual([1, 2, 6, 7, 12, 13, 14, 15]);
  });

  it('gives the same logprob at every target and the same loss gradients', () => {
    const packed = sftLossAndGrads(weights, packedInput, packedTargets);
    const perBranch = new Float64Array(TARGETS.length);
    const summed = new Map<string, Float64Array>();
    BRANCHES.forEach((ids, b) => {
      const mine = TARGETS.map((t, j) => ({ t, j })).filter(({ t }) => t.branch === b);
      const res = sftLossAndGrads(
        weights,
        causal(ids),
        mine.map(({ t }) => ({ predictor: t.index - 1, token: TOKEN[t.id] })),
      );
      mine.forEach(({ j }, m) => (perBranch[j] = res.logprobs[m]));
      // sftLossAndGrads averages within a branch; rescale to the packed mean over all 8 targets.
      for (const [name, g] of res.grads) {
        const acc = summed.get(name) ?? new Float64Array(g.length);
        for (let i = 0; i < g.length; i++) acc[i] += (g[i] * mine.length) / TARGETS.length;
        summed.set(name, acc);
      }
    });
    expectClose(packed.logprobs, perBranch, { abs: 1e-12, label: 'logprobs packed vs per branch' });
    for (const [name, g] of packed.grads) expectClose(g, summed.get(name)!, { abs: 1e-12, label: `grad ${name}` });
  });

  it('differs from the naive-compressed score at the diverging leaves 13 and 14 (the check can fail)', () => {
    const finalWalk = BRANCHES[2];
    const naive = referenceLogprobs(weights, causal(finalWalk), [
      { predictor: 3, token: TOKEN[13] },
      { predictor: 4, token: TOKEN[14] },
    ]);
    const packed = referenceLogprobs(weights, packedInput, packedTargets.slice(4, 6));
    for (let j = 0; j < 2; j++) expect(Math.abs(naive[j] - packed[j])).toBeGreaterThan(1e-3);
  });
});
