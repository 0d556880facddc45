// Binding of attention-decode-gqa.wgsl: causal grouped-query attention of the M newest rows of a live view
// against a KV cache of any length (the model families' incremental decoding).

import reduce from '../common/reduce.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline } from '../../runtime/pipeline';
import kernel from './attention-decode-gqa.wgsl?raw';

const code = `${reduce}\n${kernel}`;
/** Invocations per (row, head) and keys per chunk: the WG and CHUNK overrides. */
export const DECODE_ATTENTION = { WG: 64, CHUNK: 256 } as const;

export interface DecodeAttentionShape {
  NH: number;
  NKV: number;
  HS: number;
  /** Position (cache row) of the first new row. */
  start: number;
  /** New rows. */
  M: number;
}

/** Mirror of `struct Params` in attention-decode-gqa.wgsl: start: u32 @ 0, M: u32 @ 4. */
export function decodeAttentionParams(start: number, M: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, start, true);
  view.setUint32(4, M, true);
  return bytes;
}

export function createDecodeAttention(device: GPUDevice, shape: DecodeAttentionShape, b: { cache: BufferRef; out: BufferRef }): Launch {
  const { NH, NKV, HS, start, M } = shape;
  if (NH % NKV !== 0) throw new Error(`attention-decode-gqa: ${NKV} key/value heads do not divide ${NH} query heads`);
  if (HS > 4 * DECODE_ATTENTION.WG) throw new Error(`attention-decode-gqa: head size ${HS} is above ${4 * DECODE_ATTENTION.WG}`);
  checkLength(b.cache, (start + M) * (NH + 2 * NKV) * HS, 'cache');
  checkLength(b.out, M * NH * HS, 'out');
  const pipeline = computePipeline(device, 'decode_attention', code, { NH, NKV, HS, ...DECODE_ATTENTION });
  const params = uploadUniform(device, 'decode_attention.params', decodeAttentionParams(start, M));
  const group = bindBuffers(device, 'decode_attention.bindGroup', pipeline, { 0: params, 1: b.cache, 2: b.out });
  return { label: 'decode_attention', pipeline, group, workgroups: M === 0 ? [0, 0, 0] : [M, NH, 1], uniforms: [params] };
}
