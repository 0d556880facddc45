// One extend of the KV-cache decoder (src/gpu/generate.ts) as plain functions over plain data: the
// decoder's buffers (allocated once for up to P rows), the launches of a block of M new rows at row
// `start` (recorded as passes, each followed by at most one copy), and running them: one submit and
// one read back of the last row's logits.

import { headSize } from '../model/config';
import { createOwner } from './runtime/buffers';
import { encodeLaunches, releaseLaunches, type Launch } from './runtime/kernel';
import { attentionConfig, createAttentionForward, createAttentionMask, type AttentionMask } from './kernels/attention/attention';
import { attentionDecodeParams, createAttentionDecode } from './kernels/attention-decode/attention-decode';
import { createEmbedding } from './kernels/embedding/embedding';
import { createBlockLaunches, createLogitsLaunches, type GpuModel } from './model';

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
export interface StepLaunches {
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

/** Attention of a block of new rows (DecoderOptions.attention). */
export type DecodeAttention = 'auto' | 'decode' | 'flash';

/** The decoder's buffers, sized for P rows, owned by `owner` (destroyed with it). */
export function createDecoderBuffers(model: GpuModel) {
  const { device } = model.gpu;
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = model.config;
  const owner = createOwner(device, 'Decoder');
  const { buf } = owner;
  return {
    owner,
    cache: Array.from({ length: L }, (_, l) => buf(`h${l}.qkvCache`, P * 3 * C)), // (P, 3C) each
    tokenIds: buf('tokens', P), // (M) u32: the new rows' tokens
    positionIds: buf('positions', P), // (M) u32
    x: buf('x', P * C), // (M, C): residual stream, a layer's input and output
    x1: buf('x1', P * C), // (M, C): residual after attention
    ln: buf('ln', P * C), // (M, C)
    mean: buf('mean', P), // (M): LayerNorm statistics (required outputs, unused here)
    rstd: buf('rstd', P),
    qkvNew: buf('qkvNew', P * 3 * C), // (M, 3C): the new rows' q | k | v, copied into the cache
    att: buf('att', P * C), // (M, C)
    attAll: buf('attAll', P * C), // (n, C): the flash path's attention of every row of the view
    lse: buf('lse', NH * P), // (NH, n): the flash kernel's log-sum-exp (written, unused)
    proj: buf('proj', P * C), // (M, C)
    fc: buf('fc', P * 4 * C), // (M, 4C)
    last: buf('last', C), // (1, C): the last new row of x
    lnf: buf('lnf', C), // (1, C)
    logits: buf('logits', V), // (1, V)
    staging: owner.own(model.gpu.device.createBuffer({ label: 'Decoder.staging', size: V * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST })),
  };
}

export type DecoderBuffers = ReturnType<typeof createDecoderBuffers>;

/** The launches of M new rows at row `start` (n = start + M rows in the view after them). */
export function recordStep(model: GpuModel, b: DecoderBuffers, path: DecodeAttention, start: number, M: number): StepLaunches {
  const { gpu, config } = model;
  const { device } = gpu;
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = config;
  const HS = headSize(config);
  const t = model.tensor;
  const n = start + M;
  const flash = path === 'auto' ? useFlashPrefill(start, M) : path === 'flash' && M > 1;
  const mask = flash ? createAttentionMask(device, new Uint32Array(n).fill(n), attentionConfig(gpu.info)) : undefined;
  const passes: StepLaunches['passes'] = [];
  const decode: Launch[] = [];
  let open: Launch[] = createEmbedding(
    device,
    { N: M, C, V },
    { tokens: b.tokenIds, positions: b.positionIds, wte: t('wte.weight'), wpe: t('wpe.weight'), out: b.x },
  );
  const close = (copy: Copy) => {
    passes.push({ launches: open, copy });
    open = [];
  };
  for (let l = 0; l < L; l++) {
    // One set of buffers for every layer: x in and out, ln and its statistics for both norms, proj for both projections.
    const block = createBlockLaunches(model, l, M, {
      x: b.x,
      ln1: b.ln,
      ln1Mean: b.mean,
      ln1Rstd: b.rstd,
      qkv: b.qkvNew,
      att: b.att,
      attProj: b.proj,
      x1: b.x1,
      ln2: b.ln,
      ln2Mean: b.mean,
      ln2Rstd: b.rstd,
      fc: b.fc,
      mlpProj: b.proj,
      out: b.x,
    });
    open.push(...block.toQkv);
    // The new rows' q | k | v into the cache at row `start`: attention reads them from there.
    close({ src: b.qkvNew, srcOffset: 0, dst: b.cache[l], dstOffset: 'start', bytes: M * 3 * C * 4 });
    if (mask) {
      open.push(createAttentionForward(device, mask, { NH, HS }, { qkv: b.cache[l], out: b.attAll, lse: b.lse }));
      close({ src: b.attAll, srcOffset: start * C * 4, dst: b.att, dstOffset: 0, bytes: M * C * 4 });
    } else {
      const a = createAttentionDecode(device, { NH, HS, P, start, M }, { qkv: b.cache[l], out: b.att });
      decode.push(a);
      open.push(a);
    }
    open.push(...block.fromAttention);
  }
  // Only the last row goes on to the head.
  close({ src: b.x, srcOffset: (M - 1) * C * 4, dst: b.last, dstOffset: 0, bytes: C * 4 });
  open.push(...createLogitsLaunches(model, 1, { x: b.last, lnf: b.lnf, mean: b.mean, rstd: b.rstd, logits: b.logits }));
  close({ src: b.logits, srcOffset: 0, dst: b.staging, dstOffset: 0, bytes: V * 4 });
  return { passes, decode, mask, all: passes.flatMap((p) => p.launches) };
}

/** Moves a recorded one-row step to row `start` (its attention uniforms; the cache copy follows `start` when run). */
export function moveSingleStep(device: GPUDevice, step: StepLaunches, start: number): void {
  for (const a of step.decode) device.queue.writeBuffer(a.uniforms[0], 0, attentionDecodeParams(start, 1));
}

export function releaseStep(step: StepLaunches): void {
  releaseLaunches(step.all);
  step.mask?.destroy();
}

/** Runs `step` on `tokens` at rows start.. of the cache: one submit, and the last row's logits (V) read back. */
export async function runStep(model: GpuModel, b: DecoderBuffers, step: StepLaunches, start: number, tokens: readonly number[]): Promise<Float32Array> {
  const { device } = model.gpu;
  const C = model.config.nEmbd;
  device.queue.writeBuffer(b.tokenIds, 0, Uint32Array.from(tokens));
  device.queue.writeBuffer(
    b.positionIds,
    0,
    Uint32Array.from({ length: tokens.length }, (_, i) => start + i),
  );
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
  await b.staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(b.staging.getMappedRange().slice(0));
  b.staging.unmap();
  return out;
}
