// The tied output head: logits (N, V) = x (N, C) · wteᵀ, wte stored (V, C) (docs/model.md). When wte
// exceeds one binding (GPT-2's 154 MB; src/gpu/runtime/limits.ts) it is read in blocks of vocabulary rows,
// each matmul writing its block of logit columns at row stride V.

import { tableBlocks } from './kernels/embedding/embedding';
import { checkLength, type BufferRef, type Launch } from './runtime/kernel';
import { subBinding } from './runtime/limits';
import { createMatmul } from './kernels/matmul/matmul';

export interface HeadBuffers {
  x: BufferRef; // (N, C): the final LayerNorm's output
  wte: BufferRef; // (V, C)
  logits: BufferRef; // (N, V)
}

export function createHead(device: GPUDevice, shape: { N: number; C: number; V: number }, b: HeadBuffers): Launch[] {
  const { N, C, V } = shape;
  checkLength(b.logits, N * V, 'logits');
  return tableBlocks(device, b.wte, V, C, 'output head wte').map(({ block, ref }) => {
    const Vb = block.end - block.first;
    // Columns first .. end - 1 of every row: the binding starts at column `first` of row 0.
    const y = block.first === 0 && Vb === V ? b.logits : subBinding(b.logits, block.first * 4, ((N - 1) * V + Vb) * 4);
    return createMatmul(device, { M: N, K: C, N: Vb, ldY: V }, { x: b.x, w: ref, y }, { transB: true });
  });
}
