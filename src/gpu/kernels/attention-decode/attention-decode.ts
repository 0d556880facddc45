// Binding of attention-decode.wgsl: causal attention of the M newest rows of a live view
// against the KV cache (rows 0 .. start+M-1 of qkv), for incremental decoding.
// Reference: attentionRef in ../attention/attention.reference.ts (a decode step is attention's last query row).

import code from './attention-decode.wgsl?raw';
import reduce from '../common/reduce.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type Launch } from '../../runtime/kernel';
import { computePipeline } from '../../runtime/pipeline';

const WG = 64;

export interface AttentionDecodeShape {
  NH: number;
  HS: number;
  /** Rows the cache holds (the model's positions): the kernel's workgroup score buffer. */
  P: number;
  /** Position of the first new row. */
  start: number;
  /** New rows. */
  M: number;
}

/** Mirror of `struct Params` in attention-decode.wgsl: start: u32 @ 0, M: u32 @ 4. */
export function attentionDecodeParams(start: number, M: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, start, true);
  view.setUint32(4, M, true);
  return bytes;
}

export function createAttentionDecode(
  device: GPUDevice,
  shape: AttentionDecodeShape,
  buffers: { qkv: GPUBuffer /* (P, 3C) */; out: GPUBuffer /* (M, C) */ },
): Launch {
  const { NH, HS, P, start, M } = shape;
  const C = NH * HS;
  if (start + M > P) throw new Error(`attention_decode: rows ${start}..${start + M} exceed the cache of ${P} positions`);
  checkLength(buffers.qkv, (start + M) * 3 * C, 'qkv');
  checkLength(buffers.out, M * C, 'out');
  const pipeline = computePipeline(device, 'attention_decode', reduce + code, { NH, HS, WG, MAX_KEYS: P });
  const params = uploadUniform(device, 'attention_decode.params', attentionDecodeParams(start, M));
  const group = bindBuffers(device, 'attention_decode.bindGroup', pipeline, { 0: params, 1: buffers.qkv, 2: buffers.out });
  return { label: 'attention_decode', pipeline, group, workgroups: M === 0 ? [0, 0, 0] : [M, NH, 1], uniforms: [params] };
}
