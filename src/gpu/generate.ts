// Incremental decoding on the GPU: a KV cache over one live view. Per layer the cache keeps the
// qkv rows (P, 3C) of every position computed so far; extending the view by rows [start, n) runs
// the row-local ops on the M = n - start new rows only and attends them to the cache
// (attention-decode.wgsl; a large block, e.g. a prefill, takes the flash kernel over the causal
// view instead when that is cheaper), and the head runs on the last row alone. After an edit the
// rows below the first changed position stay (prefix caching); the rest are recomputed on the next
// extend. One submit and one readback (the last row's logits) per extend.

import { headSize, describeConfig } from '../model/config';
import { commonPrefix, createModelPolicy, type IncrementalDecoder, type LanguageModel, type ModelPolicyOptions } from '../harness/policies/model';
import type { Policy } from '../harness/policy';
import { createOwner } from './runtime/buffers';
import { encodeLaunches, releaseLaunches, type Launch } from './runtime/kernel';
import { attentionConfig, createAttentionForward, createAttentionMask, type AttentionMask } from './kernels/attention/attention';
import { attentionDecodeParams, createAttentionDecode } from './kernels/attention-decode/attention-decode';
import { createEmbedding } from './kernels/embedding/embedding';
import { checkModelFits, createBlockLaunches, createLogitsLaunches, type GpuModel } from './model';

export interface Decoder extends IncrementalDecoder {
  readonly model: GpuModel;
  /** Clears the cache and computes `view` from scratch: the logits (V) of its last row. */
  reset(view: readonly number[]): Promise<Float32Array>;
  /** Work done so far: rows computed (prefill and decode), extends (submits) issued. */
  readonly stats: { rows: number; extends: number };
}

/** A copy between two passes (copies may not sit inside a compute pass). */
interface Copy {
  src: GPUBuffer;
  srcOffset: number;
  dst: GPUBuffer;
  /** Bytes, or `start`: the cache row of the first new row (a replayed one-row step moves it). */
  dstOffset: number | 'start';
  bytes: number;
}

/** The launches of one extend, as passes each followed by at most one copy. */
interface StepLaunches {
  passes: { launches: Launch[]; copy?: Copy }[];
  /** attention_decode launch of each layer (none on the flash path): one uniform (start, M), rewritten when the step is replayed. */
  decode: Launch[];
  /** The flash path's causal mask over rows 0..n-1 (destroyed with the step). */
  mask?: AttentionMask;
  all: Launch[];
}

/**
 * Cost of attention_decode per new row in visible pairs of the flash kernel, measured on
 * SwiftShader (a workgroup per row and head, with barriers: ~0.9 ms per row at NH 4; the flash
 * kernel ~0.45 µs per pair, C 128). A block of M new rows at n rows in all takes the flash kernel
 * over the whole causal view (n(n+1)/2 pairs, the cached rows recomputed and dropped) when that is
 * cheaper than M decode rows: a prefill or a large recompute after an edit, not a decode step.
 */
export const DECODE_ROW_PAIRS = 2000;

export function useFlashPrefill(start: number, M: number): boolean {
  const n = start + M;
  return M > 1 && (n * (n + 1)) / 2 < M * DECODE_ROW_PAIRS;
}

export interface DecoderOptions {
  /**
   * Attention of a block of new rows: `auto` picks by cost (useFlashPrefill), `decode` always uses
   * attention_decode, `flash` uses the flash kernel for every block of two or more rows. All
   * three give the same numbers up to float reassociation; tests pin each path.
   */
  attention?: 'auto' | 'decode' | 'flash';
}

/**
 * A decoder over `model`. Buffers for up to P rows are allocated once (the cache, L·P·3C floats,
 * and one layer's activations for a P-row prefill); the launches of a one-row step are recorded
 * once and replayed, with only the tokens, positions and attention uniforms rewritten.
 */
export function createDecoder(model: GpuModel, options: DecoderOptions = {}): Decoder {
  const { gpu, config } = model;
  const { device } = gpu;
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = config;
  const HS = headSize(config);
  checkModelFits(config, device, P);
  const owner = createOwner(device, 'Decoder');
  const { buf } = owner;
  const cache = Array.from({ length: L }, (_, l) => buf(`h${l}.qkvCache`, P * 3 * C)); // (P, 3C) each
  const tokenIds = buf('tokens', P); // (M) u32: the new rows' tokens
  const positionIds = buf('positions', P); // (M) u32
  const x = buf('x', P * C); // (M, C): residual stream, a layer's input and output
  const x1 = buf('x1', P * C); // (M, C): residual after attention
  const ln = buf('ln', P * C); // (M, C)
  const mean = buf('mean', P); // (M): LayerNorm statistics (required outputs, unused here)
  const rstd = buf('rstd', P);
  const qkvNew = buf('qkvNew', P * 3 * C); // (M, 3C): the new rows' q | k | v, copied into the cache
  const att = buf('att', P * C); // (M, C)
  const attAll = buf('attAll', P * C); // (n, C): the flash path's attention of every row of the view
  const lse = buf('lse', NH * P); // (NH, n): the flash kernel's log-sum-exp (written, unused)
  const proj = buf('proj', P * C); // (M, C)
  const fc = buf('fc', P * 4 * C); // (M, 4C)
  const last = buf('last', C); // (1, C): the last new row of x
  const lnf = buf('lnf', C); // (1, C)
  const logits = buf('logits', V); // (1, V)
  const staging = owner.own(device.createBuffer({ label: 'Decoder.staging', size: V * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
  const t = model.tensor;
  const attention = attentionConfig(gpu.info);
  const attentionPath = options.attention ?? 'auto';
  if (!['auto', 'decode', 'flash'].includes(attentionPath)) throw new Error(`createDecoder: attention must be auto, decode or flash, got ${attentionPath}`);

  const recordStep = (start: number, M: number): StepLaunches => {
    const n = start + M;
    const flash = attentionPath === 'auto' ? useFlashPrefill(start, M) : attentionPath === 'flash' && M > 1;
    const mask = flash ? createAttentionMask(device, new Uint32Array(n).fill(n), attention) : undefined;
    const passes: StepLaunches['passes'] = [];
    const decode: Launch[] = [];
    let open: Launch[] = createEmbedding(device, { N: M, C, V }, { tokens: tokenIds, positions: positionIds, wte: t('wte.weight'), wpe: t('wpe.weight'), out: x });
    const close = (copy: Copy) => {
      passes.push({ launches: open, copy });
      open = [];
    };
    for (let l = 0; l < L; l++) {
      // One set of buffers for every layer: x in and out, ln and its statistics for both norms, proj for both projections.
      const block = createBlockLaunches(model, l, M, { x, ln1: ln, ln1Mean: mean, ln1Rstd: rstd, qkv: qkvNew, att, attProj: proj, x1, ln2: ln, ln2Mean: mean, ln2Rstd: rstd, fc, mlpProj: proj, out: x });
      open.push(...block.toQkv);
      // The new rows' q | k | v into the cache at row `start`: attention reads them from there.
      close({ src: qkvNew, srcOffset: 0, dst: cache[l], dstOffset: 'start', bytes: M * 3 * C * 4 });
      if (mask) {
        open.push(createAttentionForward(device, mask, { NH, HS }, { qkv: cache[l], out: attAll, lse }));
        close({ src: attAll, srcOffset: start * C * 4, dst: att, dstOffset: 0, bytes: M * C * 4 });
      } else {
        const a = createAttentionDecode(device, { NH, HS, P, start, M }, { qkv: cache[l], out: att });
        decode.push(a);
        open.push(a);
      }
      open.push(...block.fromAttention);
    }
    // Only the last row goes on to the head.
    close({ src: x, srcOffset: (M - 1) * C * 4, dst: last, dstOffset: 0, bytes: C * 4 });
    open.push(...createLogitsLaunches(model, 1, { x: last, lnf, mean, rstd, logits }));
    close({ src: logits, srcOffset: 0, dst: staging, dstOffset: 0, bytes: V * 4 });
    return { passes, decode, mask, all: passes.flatMap((p) => p.launches) };
  };
  // The one-row step, replayed for every decoded token.
  let single: StepLaunches | undefined;
  const release = (step: StepLaunches) => {
    releaseLaunches(step.all);
    step.mask?.destroy();
  };

  const tokens: number[] = [];
  const stats = { rows: 0, extends: 0 };
  let busy = false;
  let destroyed = false;

  const extend = async (newTokens: readonly number[]): Promise<Float32Array> => {
    if (destroyed) throw new Error('Decoder: used after destroy()');
    if (busy) throw new Error('Decoder: extend while another extend is in flight (a decoder serves one view; await each call)');
    const M = newTokens.length;
    const start = tokens.length;
    if (M === 0) throw new Error('Decoder.extend: no tokens (nothing to compute logits for)');
    for (const token of newTokens) {
      if (!(Number.isInteger(token) && token >= 0 && token < V)) throw new Error(`Decoder: token ${token} is outside the vocabulary of ${V}`);
    }
    if (start + M > P) {
      throw new Error(`Decoder: the live view would hold ${start + M} tokens, more than the model's ${P} positions`);
    }
    busy = true;
    let step: StepLaunches | undefined;
    try {
      device.queue.writeBuffer(tokenIds, 0, Uint32Array.from(newTokens));
      device.queue.writeBuffer(positionIds, 0, Uint32Array.from({ length: M }, (_, i) => start + i));
      if (M === 1) {
        single ??= recordStep(start, 1);
        step = single;
        for (const a of step.decode) device.queue.writeBuffer(a.uniforms[0], 0, attentionDecodeParams(start, 1));
      } else step = recordStep(start, M);

      const encoder = device.createCommandEncoder({ label: 'Decoder.encoder' });
      for (const [p, { launches, copy }] of step.passes.entries()) {
        const pass = encoder.beginComputePass({ label: `Decoder.pass${p}` });
        encodeLaunches(pass, launches);
        pass.end();
        if (copy) {
          const dstOffset = copy.dstOffset === 'start' ? start * 3 * C * 4 : copy.dstOffset;
          encoder.copyBufferToBuffer(copy.src, copy.srcOffset, copy.dst, dstOffset, copy.bytes);
        }
      }
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      for (const token of newTokens) tokens.push(token);
      stats.rows += M;
      stats.extends++;
      return out;
    } finally {
      if (step && step !== single) release(step);
      busy = false;
    }
  };

  const truncate = (n: number) => {
    if (!(Number.isInteger(n) && n >= 0)) throw new Error(`Decoder.truncate: ${n} is not a row count`);
    if (busy) throw new Error('Decoder: truncate while an extend is in flight');
    if (n < tokens.length) tokens.length = n;
  };

  const decoder: Decoder = {
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
      if (single) release(single);
      owner.destroy();
    },
  };
  return decoder;
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
