// Incremental decoding on the GPU: a KV cache over one live view. Per layer the cache keeps the
// qkv rows (P, 3C) of every position computed so far; extending the view by rows [start, n) runs
// the row-local ops on the M = n - start new rows only and attends them to the cache
// (attention-decode.wgsl; a large block, e.g. a prefill, takes the flash kernel over the causal
// view instead when that is cheaper), and the head runs on the last row alone. After an edit the
// rows below the first changed position stay (prefix caching); the rest are recomputed on the next
// extend. One submit and one readback (the last row's logits) per extend (src/gpu/decode-step.ts);
// this file keeps the view: its tokens, the prefix an edit leaves, and the calls' order.

import { describeConfig } from '../model/config';
import { commonPrefix, createModelPolicy, type IncrementalDecoder, type LanguageModel, type ModelPolicyOptions } from '../harness/policies/model';
import type { Policy } from '../harness/policy';
import { createDecoderBuffers, moveSingleStep, recordStep, releaseStep, runStep, type DecodeAttention, type StepLaunches } from './decode-step';
import { checkModelFits, type GpuModel } from './model';

export interface Decoder extends IncrementalDecoder {
  readonly model: GpuModel;
  /** Clears the cache and computes `view` from scratch: the logits (V) of its last row. */
  reset(view: readonly number[]): Promise<Float32Array>;
  /** Work done so far: rows computed (prefill and decode), extends (submits) issued. */
  readonly stats: { rows: number; extends: number };
}

export interface DecoderOptions {
  /**
   * Attention of a block of new rows: `auto` picks by cost (useFlashPrefill), `decode` always uses
   * attention_decode, `flash` uses the flash kernel for every block of two or more rows. All
   * three give the same numbers up to float reassociation; tests pin each path.
   */
  attention?: DecodeAttention;
}

/**
 * Throws naming what is wrong with extending a view of `length` tokens by `tokens`, on a model of V
 * tokens whose decoder `who` holds P positions (`whose`: the model's, or a family decoder's capacity).
 */
export function checkExtend(length: number, tokens: readonly number[], V: number, P: number, who = 'Decoder', whose = "the model's"): void {
  if (tokens.length === 0) throw new Error(`${who}.extend: no tokens (nothing to compute logits for)`);
  for (const token of tokens) {
    if (!(Number.isInteger(token) && token >= 0 && token < V)) throw new Error(`${who}: token ${token} is outside the vocabulary of ${V}`);
  }
  if (length + tokens.length > P) {
    throw new Error(`${who}: the live view would hold ${length + tokens.length} tokens, more than ${whose} ${P} positions`);
  }
}

/**
 * A decoder over `model`. Buffers for up to P rows are allocated once (the cache, L·P·3C floats,
 * and one layer's activations for a P-row prefill); the launches of a one-row step are recorded
 * once and replayed, with only the tokens, positions and attention uniforms rewritten.
 */
export function createDecoder(model: GpuModel, options: DecoderOptions = {}): Decoder {
  const { device } = model.gpu;
  const { vocabSize: V, nPositions: P } = model.config;
  checkModelFits(model.config, device, P);
  const attentionPath = options.attention ?? 'auto';
  if (!['auto', 'decode', 'flash'].includes(attentionPath)) throw new Error(`createDecoder: attention must be auto, decode or flash, got ${attentionPath}`);
  const buffers = createDecoderBuffers(model);
  // The one-row step, replayed for every decoded token.
  let single: StepLaunches | undefined;

  const tokens: number[] = [];
  const stats = { rows: 0, extends: 0 };
  let busy = false;
  let destroyed = false;

  const extend = async (newTokens: readonly number[]): Promise<Float32Array> => {
    if (destroyed) throw new Error('Decoder: used after destroy()');
    if (busy) throw new Error('Decoder: extend while another extend is in flight (a decoder serves one view; await each call)');
    const M = newTokens.length;
    const start = tokens.length;
    checkExtend(start, newTokens, V, P);
    busy = true;
    let step: StepLaunches | undefined;
    try {
      if (M === 1) {
        single ??= recordStep(model, buffers, attentionPath, start, 1);
        step = single;
        moveSingleStep(device, step, start);
      } else step = recordStep(model, buffers, attentionPath, start, M);
      const out = await runStep(model, buffers, step, start, newTokens);
      for (const token of newTokens) tokens.push(token);
      stats.rows += M;
      stats.extends++;
      return out;
    } finally {
      if (step && step !== single) releaseStep(step);
      busy = false;
    }
  };

  const truncate = (n: number) => {
    if (!(Number.isInteger(n) && n >= 0)) throw new Error(`Decoder.truncate: ${n} is not a row count`);
    if (busy) throw new Error('Decoder: truncate while an extend is in flight');
    if (n < tokens.length) tokens.length = n;
  };

  return {
    model,
    get length() {
      return tokens.length;
    },
    get tokens() {
      return tokens;
    },
    stats,
    truncate,
    extend,
    async sync(view) {
      if (view.length === 0) throw new Error('Decoder.sync: an empty view has no last row');
      if (view.length > P) throw new Error(`Decoder: a live view of ${view.length} tokens is longer than the model's ${P} positions`);
      // Keep at least the last row to recompute: its logits are the answer.
      const keep = Math.min(commonPrefix(tokens, view), view.length - 1);
      truncate(keep);
      return extend(view.slice(keep));
    },
    async reset(view) {
      truncate(0);
      return extend(view);
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      if (single) releaseStep(single);
      buffers.owner.destroy();
    },
  };
}

/** The GPU model as the harness's `LanguageModel`: one decoder (KV cache) per episode. */
export function gpuLanguageModel(model: GpuModel): LanguageModel {
  const c = model.config;
  return {
    name: `gpt2(${describeConfig(c)})`,
    vocabSize: c.vocabSize,
    nPositions: c.nPositions,
    createDecoder: () => createDecoder(model),
  };
}

/** The model policy (src/harness/policies/model.ts) on this GPU model. */
export function createGpuModelPolicy(model: GpuModel, options: ModelPolicyOptions = {}): Policy {
  return createModelPolicy(gpuLanguageModel(model), options);
}
