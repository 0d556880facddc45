// The model policy: a language model writes the actions, token by token, through an incremental
// decoder (a KV cache over the live view). This file owns what is not arithmetic: sampling
// (temperature, top-k, top-p, seeded), stop tokens, the recorded logprobs and the cache contract of
// policy.ts (after onEdit the rows below the first changed position are kept). No GPU here: the
// WGSL decoder (src/gpu/generate.ts) is one `LanguageModel`; a CPU stand-in is another. Prefix
// reuse compares token values: a cache row depends only on the tokens at and before it.
//
// Recorded logprobs are the MODEL's: log π(token | live view) = log_softmax(logits)[token] at
// temperature 1 over the full vocabulary, in float64 from the fp32 logits, whatever temperature,
// top-k or top-p the sampler used (as serving engines report raw logprobs). They are docs/rollout-format.md's
// rollout-time logprobs, the numbers that scoring a token on its live prefix (logit-tree, packed-4d)
// must reproduce; with T = 1 and no truncation they are also the sampling distribution's.

import { createRng, type Rng } from '../../util/prng';
import { BYTE_FRAMING, type Framing } from '../framing';
import type { Policy, PolicySession } from '../policy';

/** A KV cache over one growing live view: rows 0..length-1 hold its tokens at positions 0..length-1. */
export interface IncrementalDecoder {
  /** Rows the cache holds. */
  readonly length: number;
  /** Token values of those rows. */
  readonly tokens: readonly number[];
  /** Forgets the rows from `n` on; rows below `n` stay valid (a prefix of the view is unchanged). */
  truncate(n: number): void;
  /** Appends rows at positions length.., computes them, returns the logits (V) of the last one. */
  extend(tokens: readonly number[]): Promise<Float32Array>;
  /**
   * Makes the cache hold exactly `view`: keeps the rows of the longest common prefix (by token
   * value; a row depends only on the tokens at and before it), recomputes the rest, and returns
   * the logits of the view's last row (recomputing that row when the view is all cached).
   */
  sync(view: readonly number[]): Promise<Float32Array>;
  destroy(): void;
}

export interface LanguageModel {
  /** For the rollout's meta, e.g. `gpt2(V 272, C 128, 4 layers, 4 heads, P 1024)`. */
  readonly name: string;
  readonly vocabSize: number;
  /** Positions the model has: no live view may be longer. */
  readonly nPositions: number;
  createDecoder(): IncrementalDecoder;
}

/**
 * What survives an edit in the cache: `prefix` keeps the rows below the first changed position
 * (prefix caching, as serving engines do); `appends` keeps the cache only while the view grows and
 * recomputes the whole view after an edit; `none` recomputes the whole view for every token (no
 * KV cache at all). All three give the same tokens and logprobs; they differ in work (bench/generate.ts).
 */
export type CacheReuse = 'prefix' | 'appends' | 'none';
export const CACHE_REUSE: readonly CacheReuse[] = ['prefix', 'appends', 'none'];

export interface SamplingOptions {
  /** Softmax temperature; 0 is greedy (argmax). Default 1. */
  temperature?: number;
  /** Sample among the k most likely tokens only (ties broken by token id); 0 or absent: all. */
  topK?: number;
  /**
   * Nucleus: after temperature and top-k, keep the fewest most likely tokens whose probability
   * reaches p (at least one); 1 or absent: all.
   */
  topP?: number;
}

/** Temperature 1 over the whole vocabulary: the recorded logprobs are the sampling distribution's (on-policy RL). */
export const FULL_SAMPLING: Readonly<Required<SamplingOptions>> = { temperature: 1, topK: 0, topP: 1 };

/** Does `s` draw from the model's own distribution (temperature 1, nothing cut)? */
export function isFullSampling(s: SamplingOptions): boolean {
  const { temperature, topK, topP } = checkSampling(s);
  return temperature === FULL_SAMPLING.temperature && topK === FULL_SAMPLING.topK && topP === FULL_SAMPLING.topP;
}

export interface ModelPolicyOptions extends SamplingOptions {
  /** Mixed into each episode's seed (EpisodeInfo.seed); default 0 (the episode seed alone). */
  seed?: number;
  reuse?: CacheReuse;
  /** The harness's framing the episodes run in (its vocabulary and stop tokens); default the byte tokenizer's. */
  framing?: Pick<Framing, 'tokenizer' | 'vocab' | 'newline' | 'eos'>;
  /** Hears every sampled token that is fed back (all of an action's but its last) with its recorded logprob: a page can watch an action being written. */
  onToken?(token: number, logprob: number): void;
}

export function checkSampling({ temperature = 1, topK = 0, topP = 1 }: SamplingOptions): Required<SamplingOptions> {
  if (!(Number.isFinite(temperature) && temperature >= 0)) throw new Error(`temperature must be a finite number >= 0, got ${temperature}`);
  if (!(Number.isInteger(topK) && topK >= 0)) throw new Error(`top-k must be an integer >= 0 (0: all tokens), got ${topK}`);
  if (!(Number.isFinite(topP) && topP > 0 && topP <= 1)) throw new Error(`top-p must be a number in (0, 1] (1: all tokens), got ${topP}`);
  return { temperature, topK, topP };
}

/** `T=0.7, top-k=20, top-p=0.8` (top-k and top-p only when they cut). */
export function describeSampling(options: SamplingOptions): string {
  const { temperature, topK, topP } = checkSampling(options);
  return [`T=${temperature}`, ...(topK ? [`top-k=${topK}`] : []), ...(topP < 1 ? [`top-p=${topP}`] : [])].join(', ');
}

/** log_softmax of one logits row in float64: the model's log-probabilities at temperature 1. */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i] > max) max = logits[i];
  if (!Number.isFinite(max)) throw new Error(`logSoftmax: logits hold no finite maximum (${max})`);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lse;
  return out;
}

/** Token ids by descending logit, ties by ascending id (the order top-k and sampling walk). */
function rankTokens(logits: ArrayLike<number>): number[] {
  const ids = Array.from({ length: logits.length }, (_, i) => i);
  return ids.sort((a, b) => logits[b] - logits[a] || a - b);
}

/**
 * The tokens a sampler draws from and their unnormalised weights: the argmax alone when temperature
 * is 0 or top-k is 1; otherwise exp((logit − max) / T) over the top-k ranked tokens, cut to the
 * fewest whose weights reach top-p of their sum.
 */
function candidates(logits: ArrayLike<number>, options: SamplingOptions): { kept: number[]; weights: number[] } {
  const { temperature, topK, topP } = checkSampling(options);
  if (temperature === 0 || topK === 1) {
    // The argmax, the lower id among equal maxima (the first ranked token), without ranking the vocabulary.
    let best = 0;
    for (let i = 0; i < logits.length; i++) {
      if (Number.isNaN(logits[i])) throw new Error('sampleToken: NaN in the logits');
      if (logits[i] > logits[best]) best = i;
    }
    return { kept: [best], weights: [1] };
  }
  const ranked = rankTokens(logits);
  if (ranked.some((t) => Number.isNaN(logits[t]))) throw new Error('sampleToken: NaN in the logits');
  let kept = topK > 0 ? ranked.slice(0, topK) : ranked;
  const max = logits[kept[0]];
  let weights = kept.map((t) => Math.exp((logits[t] - max) / temperature));
  if (topP < 1) {
    const all = weights.reduce((a, b) => a + b, 0);
    let mass = 0;
    let n = 0;
    while (n < weights.length && mass < topP * all) mass += weights[n++];
    kept = kept.slice(0, n);
    weights = weights.slice(0, n);
  }
  return { kept, weights };
}

/**
 * Draws one token: greedy when temperature is 0 or top-k is 1; otherwise from softmax(logits / T)
 * over the top-k tokens, cut to the top-p nucleus, by inverse CDF over the ranked tokens with one
 * `rng.next()`.
 */
export function sampleToken(logits: ArrayLike<number>, options: SamplingOptions, rng: Rng): number {
  const { kept, weights } = candidates(logits, options);
  if (kept.length === 1) return kept[0];
  const total = weights.reduce((a, b) => a + b, 0);
  let u = rng.next() * total;
  for (let i = 0; i < kept.length; i++) {
    u -= weights[i];
    if (u < 0) return kept[i];
  }
  return kept[kept.length - 1];
}

/** The distribution sampleToken draws from, over the whole vocabulary (zero outside the kept tokens). */
export function samplingDistribution(logits: ArrayLike<number>, options: SamplingOptions): Float64Array {
  const { temperature, topK, topP } = checkSampling(options);
  // Nothing cut (temperature > 0, no top-k below the vocabulary, top-p 1): every token keeps its weight, so no
  // ranking is needed; sorting a 50,257- or 151,936-entry row per target was most of `mw drift`'s time on GPT-2.
  if (temperature > 0 && topK !== 1 && (topK === 0 || topK >= logits.length) && topP === 1) {
    let max = -Infinity;
    for (let i = 0; i < logits.length; i++) {
      if (Number.isNaN(logits[i])) throw new Error('sampleToken: NaN in the logits');
      if (logits[i] > max) max = logits[i];
    }
    const out = new Float64Array(logits.length);
    let total = 0;
    for (let i = 0; i < logits.length; i++) total += out[i] = Math.exp((logits[i] - max) / temperature);
    for (let i = 0; i < logits.length; i++) out[i] /= total;
    return out;
  }
  const { kept, weights } = candidates(logits, options);
  const total = weights.reduce((a, b) => a + b, 0);
  const out = new Float64Array(logits.length);
  kept.forEach((t, i) => (out[t] = weights[i] / total));
  return out;
}

/** Length of the longest common prefix of two token sequences. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function mixSeed(episodeSeed: number, seed: number): number {
  return seed === 0 ? episodeSeed : (episodeSeed ^ Math.imul(seed >>> 0, 0x85ebca6b)) >>> 0;
}

export function createModelPolicy(lm: LanguageModel, options: ModelPolicyOptions = {}): Policy {
  const sampling = checkSampling(options);
  const reuse = options.reuse ?? 'prefix';
  const seed = options.seed ?? 0;
  if (!CACHE_REUSE.includes(reuse)) throw new Error(`model policy: reuse must be one of ${CACHE_REUSE.join(', ')}, got ${reuse}`);
  if (!Number.isInteger(seed)) throw new Error(`model policy: seed must be an integer, got ${seed}`);
  const framing = options.framing ?? BYTE_FRAMING;
  if (lm.vocabSize !== framing.vocab) {
    throw new Error(
      `model policy: the harness speaks the ${framing.tokenizer} tokenizer (${framing.vocab} tokens), the model has a vocabulary of ${lm.vocabSize}`,
    );
  }
  const stops = [framing.newline, ...framing.eos];
  const P = lm.nPositions;
  return {
    name: `model ${lm.name} (${describeSampling(sampling)}${seed ? `, seed=${seed}` : ''})`,
    start(info): PolicySession {
      const rng = createRng(mixSeed(info.seed, seed));
      const decoder = lm.createDecoder();
      let closed = false;
      /** Logits of the last row of `view`, through the cache as `reuse` allows. */
      const logitsOf = (view: readonly number[]) => {
        if (reuse === 'none') decoder.truncate(0);
        return decoder.sync(view);
      };
      return {
        async act({ view, maxTokens }) {
          if (closed) throw new Error('model policy: act after close');
          if (view.length === 0) throw new Error('model policy: an empty live view (something must predict the first token)');
          // The last generated token is never fed back, so the rows needed are view + action - 1.
          if (view.length + maxTokens - 1 > P) {
            throw new Error(
              `model policy: a live view of ${view.length} tokens plus an action of up to ${maxTokens} needs ${view.length + maxTokens - 1} positions, ` +
                `the model has ${P} (run episodes with maxContext <= ${P})`,
            );
          }
          const tokens: number[] = [];
          const logprobs: number[] = [];
          let logits = await logitsOf(view);
          for (;;) {
            const token = sampleToken(logits, sampling, rng);
            tokens.push(token);
            logprobs.push(logSoftmax(logits)[token]);
            if (stops.includes(token) || tokens.length === maxTokens) break;
            options.onToken?.(token, logprobs[logprobs.length - 1]);
            logits = reuse === 'none' ? await logitsOf([...view, ...tokens]) : await decoder.extend([token]);
          }
          return { tokens, logprobs };
        },
        onEdit(view, firstChanged) {
          if (reuse !== 'prefix') {
            decoder.truncate(0);
            return;
          }
          // The contract says rows below firstChanged are unchanged; the next sync keeps the whole
          // common prefix by value, which is never shorter (an inserted summary may repeat the one
          // it replaces token for token: new physical ids, same values, same rows).
          const shared = commonPrefix(decoder.tokens, view);
          if (shared < Math.min(firstChanged, decoder.length)) {
            throw new Error(`model policy: onEdit says positions below ${firstChanged} are unchanged, but position ${shared} changed`);
          }
        },
        close() {
          if (!closed) decoder.destroy();
          closed = true;
        },
      };
    },
  };
}
