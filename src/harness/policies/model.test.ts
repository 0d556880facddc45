// The model policy without a GPU: sampling against its exact distribution, and the cache contract
// (what each reuse mode recomputes) on a CPU stand-in language model whose logits are a seeded
// function of the whole prefix, so any stale cache row would change the tokens.
import { describe, expect, it } from 'vitest';
import { createRng } from '../../util/prng';
import { EOS } from '../../rollout/tokenizer';
import { createEditor, editorSpec } from '../editors';
import { createLookupEnv } from '../env/lookup';
import { runEpisode } from '../episode';
import { verifyEpisode } from '../verify';
import { NEWLINE } from '../policy';
import {
  commonPrefix,
  createModelPolicy,
  describeSampling,
  logSoftmax,
  sampleToken,
  samplingDistribution,
  type IncrementalDecoder,
  type LanguageModel,
} from './model';

const V = 272;

/** Logits of the row after `prefix`: seeded by a hash of every token and the length; `\n` favoured. */
function prefixLogits(prefix: readonly number[]): Float32Array {
  let h = 0x811c9dc5;
  for (const t of prefix) h = Math.imul(h ^ t, 0x01000193) >>> 0;
  const rng = createRng(h ^ prefix.length);
  const out = Float32Array.from({ length: V }, () => rng.normal());
  out[NEWLINE] += 4;
  out[EOS] -= 4;
  return out;
}

/** A CPU language model that counts the rows it computes (a row's logits need its whole prefix). */
function createCpuModel(P: number): LanguageModel & { rows: number } {
  const lm = {
    name: 'cpu-hash',
    vocabSize: V,
    nPositions: P,
    rows: 0,
    createDecoder(): IncrementalDecoder {
      const tokens: number[] = [];
      const extend = async (more: readonly number[]) => {
        if (tokens.length + more.length > P) throw new Error('past P');
        tokens.push(...more);
        lm.rows += more.length;
        return prefixLogits(tokens);
      };
      return {
        get length() {
          return tokens.length;
        },
        tokens,
        truncate: (n) => void (tokens.length = Math.min(n, tokens.length)),
        extend,
        sync(view) {
          const keep = Math.min(commonPrefix(tokens, view), view.length - 1);
          tokens.length = keep;
          return extend(view.slice(keep));
        },
        destroy() {},
      };
    },
  };
  return lm;
}

describe('sampleToken', () => {
  const logits = Float32Array.from([1.5, -0.5, 0.25, 2, 2, -3, 0.75]);

  it('draws from softmax(logits / T) over the top-k, ties broken by token id', () => {
    const rng = createRng(1);
    const n = 40_000;
    for (const [temperature, topK] of [
      [1, 0],
      [0.5, 3],
      [2, 4],
    ] as const) {
      const counts = new Array(logits.length).fill(0);
      for (let i = 0; i < n; i++) counts[sampleToken(logits, { temperature, topK }, rng)]++;
      const ranked = [3, 4, 0, 6, 2, 1, 5]; // descending logit; 3 before 4 (same logit, lower id)
      const kept = topK ? ranked.slice(0, topK) : ranked;
      const z = kept.reduce((s, t) => s + Math.exp(logits[t] / temperature), 0);
      const dist = samplingDistribution(logits, { temperature, topK });
      for (let t = 0; t < logits.length; t++) {
        const p = kept.includes(t) ? Math.exp(logits[t] / temperature) / z : 0;
        expect(dist[t]).toBeCloseTo(p, 12);
        // Five standard errors of a binomial frequency.
        expect(Math.abs(counts[t] / n - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / n) + 1e-12);
      }
    }
  });

  it('cuts to the top-p nucleus after temperature and top-k: the fewest ranked tokens reaching p', () => {
    // At T = 1: p(3) = p(4) = 0.3169, p(0) = 0.1922, p(6) = 0.0908, ...: 0.80 needs three tokens, 0.6 two, 0.3 one.
    const rng = createRng(5);
    const n = 40_000;
    for (const [topP, kept] of [
      [0.8, [3, 4, 0]],
      [0.6, [3, 4]],
      [0.3, [3]],
    ] as [number, number[]][]) {
      const counts = new Array(logits.length).fill(0);
      for (let i = 0; i < n; i++) counts[sampleToken(logits, { topP }, rng)]++;
      const z = kept.reduce((s, t) => s + Math.exp(logits[t]), 0);
      const dist = samplingDistribution(logits, { topP });
      for (let t = 0; t < logits.length; t++) {
        const p = kept.includes(t) ? Math.exp(logits[t]) / z : 0;
        expect(dist[t]).toBeCloseTo(p, 12);
        expect(Math.abs(counts[t] / n - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / n) + 1e-12);
      }
    }
    // Temperature first: at T = 0.5 tokens 3 and 4 hold 0.804 of the mass, so 0.8 keeps two.
    const counts = new Array(logits.length).fill(0);
    for (let i = 0; i < 2000; i++) counts[sampleToken(logits, { temperature: 0.5, topP: 0.8 }, rng)]++;
    expect(counts[3] + counts[4]).toBe(2000);
    expect(() => sampleToken(logits, { topP: 0 }, rng)).toThrow('top-p');
    expect(() => sampleToken(logits, { topP: 1.5 }, rng)).toThrow('top-p');
    expect(describeSampling({ temperature: 0.7, topK: 20, topP: 0.8 })).toBe('T=0.7, top-k=20, top-p=0.8');
    expect(describeSampling({})).toBe('T=1');
  });

  it('is greedy at temperature 0 and at top-k 1 (the lower id among equal maxima), and checks its options', () => {
    const rng = createRng(2);
    expect(sampleToken(logits, { temperature: 0 }, rng)).toBe(3);
    expect(sampleToken(logits, { topK: 1, temperature: 5 }, rng)).toBe(3);
    expect(Array.from(samplingDistribution(logits, { temperature: 0 }))).toEqual([0, 0, 0, 1, 0, 0, 0]);
    // Greedy and nothing cut rank nothing: a top-k of the whole vocabulary is no cut, and a NaN is refused on both paths.
    const all = samplingDistribution(logits, { temperature: 2, topK: logits.length });
    const ranked = samplingDistribution(logits, { temperature: 2, topK: logits.length - 1 });
    expect(Array.from(samplingDistribution(logits, { temperature: 2 }))).toEqual(Array.from(all));
    for (let t = 0; t < logits.length; t++) if (t !== 5) expect(ranked[t]).toBeGreaterThan(all[t]);
    expect(ranked[5]).toBe(0);
    expect(() => samplingDistribution([0, Number.NaN, 1], {})).toThrow('NaN in the logits');
    expect(() => samplingDistribution([0, Number.NaN, 1], { topK: 2 })).toThrow('NaN in the logits');
    expect(() => sampleToken([0, Number.NaN, 1], { temperature: 0 }, rng)).toThrow('NaN in the logits');
    expect(() => sampleToken(logits, { temperature: -1 }, rng)).toThrow('temperature');
    expect(() => sampleToken(logits, { topK: 1.5 }, rng)).toThrow('top-k');
  });

  it('logSoftmax is the float64 log-probability at temperature 1', () => {
    const lp = logSoftmax(logits);
    expect(lp.reduce((s, v) => s + Math.exp(v), 0)).toBeCloseTo(1, 14);
    expect(lp[3] - lp[0]).toBeCloseTo(0.5, 6);
    expect(Math.max(...lp)).toBeLessThan(0);
  });
});

describe('createModelPolicy', () => {
  const env = createLookupEnv();
  const editor = () => createEditor(editorSpec('compact', { budget: 150, keepTurns: 1 }));

  it('records the model logprob of each token, stops at the first stop token, and honours maxTokens', async () => {
    const lm = createCpuModel(1024);
    const session = await createModelPolicy(lm, { temperature: 0.7, topK: 20 }).start({ env: 'lookup', editor: editorSpec('none'), seed: 3 });
    const view = [256, 258, 97, 260];
    const action = await session.act({ view, maxTokens: 80 });
    expect(action.tokens.at(-1)).toBe(NEWLINE);
    expect(action.tokens.slice(0, -1).every((t) => t !== NEWLINE && t !== EOS)).toBe(true);
    action.tokens.forEach((t, i) => expect(action.logprobs[i]).toBe(logSoftmax(prefixLogits([...view, ...action.tokens.slice(0, i)]))[t]));
    const short = await session.act({ view: [...view, ...action.tokens, 259, 98, 260], maxTokens: 1 });
    expect(short.tokens).toHaveLength(1);
  });

  it('recomputes after an edit only from the first changed position (prefix), the whole view (appends), or everything always (none), with the same rollout', async () => {
    const rows: Record<string, number> = {};
    const rollouts: unknown[] = [];
    for (const reuse of ['prefix', 'appends', 'none'] as const) {
      const lm = createCpuModel(1024);
      const result = await runEpisode(env, editor(), createModelPolicy(lm, { reuse }), 4, { maxContext: 900 });
      verifyEpisode(result);
      expect(result.K).toBeGreaterThan(1);
      rows[reuse] = lm.rows;
      rollouts.push(result.rollout.events);
      // What prefix reuse must compute: each decode's view beyond the rows it shares with the
      // previous view + action (its first change), plus each generated token but the last.
      if (reuse === 'prefix') {
        let expected = 0;
        let previous: number[] = [];
        for (const d of result.decodes) {
          expected += d.viewTokens.length - Math.min(commonPrefix(previous, d.viewTokens), d.viewTokens.length - 1);
          expected += d.actTokens.length - 1;
          previous = [...d.viewTokens, ...d.actTokens.slice(0, -1)];
        }
        expect(lm.rows).toBe(expected);
      }
    }
    expect(rollouts[1]).toEqual(rollouts[0]);
    expect(rollouts[2]).toEqual(rollouts[0]);
    expect(rows.prefix).toBeLessThan(rows.appends);
    expect(rows.appends).toBeLessThan(rows.none);
  });

  it('refuses views that do not fit the model, edits that break the cache contract and models of another vocabulary, with clear errors', async () => {
    const lm = createCpuModel(64);
    const session = await createModelPolicy(lm).start({ env: 'lookup', editor: editorSpec('none'), seed: 0 });
    await expect(session.act({ view: new Array(60).fill(97), maxTokens: 10 })).rejects.toThrow('needs 69 positions, the model has 64');
    const action = await session.act({ view: [256, 258, 97, 98, 99, 260], maxTokens: 10 });
    // An edit that claims positions below 5 unchanged while position 2 changed breaks the contract.
    expect(() => session.onEdit!([256, 258, 120, 98, 99, 260, ...action.tokens], 5)).toThrow('position 2 changed');
    expect(() => session.onEdit!([256, 258, 97, 98, 120], 4)).not.toThrow();
    expect(() => createModelPolicy({ ...lm, vocabSize: 300 })).toThrow('vocabulary of 300');
    expect(() => createModelPolicy(lm, { reuse: 'all' as never })).toThrow('reuse must be one of');
  });
});
