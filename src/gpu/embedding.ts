// Binding of shaders/embedding.wgsl: x (N, C) = wte[tokens] + wpe[positions], and its backward into
// dwte (V, C) and dwpe (P, C) without atomics, through CPU-built inverse indices of tokens and positions.

import code from '../../shaders/embedding.wgsl?raw';
import { uploadStorage, uploadUniform } from './buffers';
import { bindBuffers, checkLength, inverseIndex, type Launch, type BufferRef } from './kernel';
import { computePipeline, groups1d } from './pipeline';

const WG = 256;

/** Mirror of `struct Params` in embedding.wgsl: rows: u32 @ 0, C: u32 @ 4. */
export function embeddingParams(rows: number, C: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, rows, true);
  view.setUint32(4, C, true);
  return bytes;
}

function launch(device: GPUDevice, entry: 'forward' | 'backward', rows: number, C: number, accumulate: boolean, buffers: Record<number, BufferRef>): Launch {
  const pipeline = computePipeline(device, `embedding.${entry}`, code, { WG, ACCUMULATE: Number(accumulate) }, entry);
  const params = uploadUniform(device, `embedding.${entry}.params`, embeddingParams(rows, C));
  const group = bindBuffers(device, `embedding.${entry}.bindGroup`, pipeline, { 0: params, ...buffers });
  const [x, y] = groups1d(rows * C, WG);
  return { label: `embedding.${entry}`, pipeline, group, workgroups: rows * C === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}

export interface EmbeddingBuffers {
  tokens: BufferRef; // (N) u32
  positions: BufferRef; // (N) u32
  wte: BufferRef; // (V, C)
  wpe: BufferRef; // (P, C)
  out: BufferRef; // (N, C)
}

export function createEmbedding(device: GPUDevice, shape: { N: number; C: number }, b: EmbeddingBuffers): Launch {
  const { N, C } = shape;
  checkLength(b.tokens, N, 'tokens');
  checkLength(b.positions, N, 'positions');
  checkLength(b.out, N * C, 'out');
  return launch(device, 'forward', N, C, false, { 1: b.tokens, 2: b.positions, 3: b.wte, 4: b.wpe, 5: b.out });
}

/** Inverse indices of one batch's tokens and positions, uploaded once and shared by every backward. */
export interface EmbeddingIndex {
  tokenOrder: BufferRef; // (N) u32
  tokenStart: BufferRef; // (V + 1) u32
  positionOrder: BufferRef; // (N) u32
  positionStart: BufferRef; // (P + 1) u32
  destroy(): void;
}

export function uploadEmbeddingIndex(
  device: GPUDevice,
  tokens: ArrayLike<number>,
  positions: ArrayLike<number>,
  V: number,
  P: number,
): EmbeddingIndex {
  const byToken = inverseIndex(tokens, V);
  const byPosition = inverseIndex(positions, P);
  const buffers = {
    tokenOrder: uploadStorage(device, 'embedding.tokenOrder', byToken.order),
    tokenStart: uploadStorage(device, 'embedding.tokenStart', byToken.start),
    positionOrder: uploadStorage(device, 'embedding.positionOrder', byPosition.order),
    positionStart: uploadStorage(device, 'embedding.positionStart', byPosition.start),
  };
  return { ...buffers, destroy: () => Object.values(buffers).forEach((b) => b.destroy()) };
}

export interface EmbeddingBackwardBuffers {
  dOut: BufferRef; // (N, C)
  dwte: BufferRef; // (V, C)
  dwpe: BufferRef; // (P, C)
}

/**
 * Two launches, dwte then dwpe. `accumulate` adds into both; `accumulateWte` into dwte alone (in
 * the model, dwte first receives the tied head's gradient and this adds the embedding's to it).
 */
export function createEmbeddingBackward(
  device: GPUDevice,
  shape: { N: number; C: number; V: number; P: number },
  index: EmbeddingIndex,
  b: EmbeddingBackwardBuffers,
  options: { accumulate?: boolean; accumulateWte?: boolean } = {},
): Launch[] {
  const { N, C, V, P } = shape;
  checkLength(b.dOut, N * C, 'dOut');
  checkLength(b.dwte, V * C, 'dwte');
  checkLength(b.dwpe, P * C, 'dwpe');
  checkLength(index.tokenStart, V + 1, 'tokenStart');
  checkLength(index.positionStart, P + 1, 'positionStart');
  const accumulate = !!options.accumulate;
  return [
    launch(device, 'backward', V, C, accumulate || !!options.accumulateWte, { 6: b.dOut, 7: index.tokenOrder, 8: index.tokenStart, 9: b.dwte }),
    launch(device, 'backward', P, C, accumulate, { 6: b.dOut, 7: index.positionOrder, 8: index.positionStart, 9: b.dwpe }),
  ];
}
