// Binding of embed.wgsl: out (N, C) = the token embedding rows of `tokens`, read from a table kept in
// the folder's format and split in vocabulary blocks that each fit one binding (one launch a block).

import type { WeightDtype } from '../../../model/family/config';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, type BufferRef, type Launch } from '../../runtime/kernel';
import type { RowBlock } from '../../runtime/limits';
import { computePipeline, groups1d } from '../../runtime/pipeline';
import { checkEven, dtypeBytes, WEIGHT_FORMAT, weightFormatWgsl, weightReads, type WeightReads } from '../weight-format/weight-format';
import kernel from './embed.wgsl?raw';

const code = (reads: WeightReads) => `${weightFormatWgsl(reads)}\n${kernel}`;
const WG = 256;

/** A block of a table's vocabulary rows and the buffer (or range) that holds exactly those rows. */
export interface TableBlock {
  block: RowBlock;
  ref: BufferRef; // (end - first, C) in the table's dtype
}

/** Mirror of `struct Params` in embed.wgsl: N: u32 @ 0, C: u32 @ 4, first: u32 @ 8, end: u32 @ 12. */
export function embedParams(N: number, C: number, block: RowBlock): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setUint32(4, C, true);
  view.setUint32(8, block.first, true);
  view.setUint32(12, block.end, true);
  return bytes;
}

export function createEmbed(
  device: GPUDevice,
  shape: { N: number; C: number },
  dtype: WeightDtype,
  b: { tokens: BufferRef; table: readonly TableBlock[]; out: BufferRef },
  options: { reads?: WeightReads } = {},
): Launch[] {
  const { N, C } = shape;
  checkEven(C, 'embed: C');
  checkLength(b.tokens, N, 'tokens');
  checkLength(b.out, N * C, 'out');
  const reads = weightReads(device, dtype, options.reads);
  const label = `embed.${dtype}${reads === 'f16' ? '.f16' : ''}`;
  const pipeline = computePipeline(device, label, code(reads), { WFMT: WEIGHT_FORMAT[dtype], WG });
  return b.table.map(({ block, ref }) => {
    checkLength(ref, Math.ceil(((block.end - block.first) * C * dtypeBytes(dtype)) / 4), 'table');
    const params = uploadUniform(device, `${label}.params`, embedParams(N, C, block));
    const group = bindBuffers(device, `${label}.bindGroup`, pipeline, { 0: b.tokens, 1: ref, 2: b.out, 3: params });
    const [x, y] = groups1d((N * C) / 2, WG);
    return { label, pipeline, group, workgroups: N === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] } satisfies Launch;
  });
}
