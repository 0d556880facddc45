// Binding of gather-rows.wgsl: out (R, C) = the rows of x (N, C) that `rows` names. Scoring
// gathers its targets' predictor rows so the final LayerNorm and the tied head run over them alone.
// Reference: gather-rows.reference.ts.

import code from './gather-rows.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 256;

export interface GatherRowsShape {
  R: number; // requests: rows of out
  C: number; // width of a row
  N: number; // rows of x
}

/** Mirror of `struct Params` in gather-rows.wgsl: R: u32 @ 0, C: u32 @ 4. */
export function gatherRowsParams({ R, C }: GatherRowsShape): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, R, true);
  view.setUint32(4, C, true);
  return bytes;
}

export function createGatherRows(device: GPUDevice, shape: GatherRowsShape, b: { x: BufferRef; rows: BufferRef; out: BufferRef }): Launch {
  const { R, C, N } = shape;
  checkLength(b.x, N * C, 'x');
  checkLength(b.rows, R, 'rows');
  checkLength(b.out, R * C, 'out');
  const pipeline = computePipeline(device, 'gather_rows', code, { WG });
  const params = uploadUniform(device, 'gather_rows.params', gatherRowsParams(shape));
  const group = bindBuffers(device, 'gather_rows.bindGroup', pipeline, { 0: b.x, 1: b.rows, 2: b.out, 3: params });
  const [x, y] = groups1d(R * C, WG);
  return { label: 'gather_rows', pipeline, group, workgroups: R * C === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}
