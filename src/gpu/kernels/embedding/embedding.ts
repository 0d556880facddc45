// Binding of embedding.wgsl: x (N, C) = wte[tokens] + wpe[positions], and its backward into
// dwte (V, C) and dwpe (P, C) without atomics, through CPU-built inverse indices of tokens and positions.
// A table larger than one binding is read (and its gradient written) in row blocks (src/gpu/runtime/limits.ts).
// Reference: embeddingRef, embeddingBackwardRef in embedding.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './embedding.wgsl?raw';
import { uploadStorage, uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, inverseIndex, refBytes, type Launch, type BufferRef } from '../../runtime/kernel';
import { bindingLimit, rowBlocks, subBinding, type RowBlock } from '../../runtime/limits';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 256;

/** Mirror of `struct Params` in embedding.wgsl: rows: u32 @ 0, C: u32 @ 4, v0: u32 @ 8, v1: u32 @ 12. */
export function embeddingParams(rows: number, C: number, block: RowBlock): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, rows, true);
  view.setUint32(4, C, true);
  view.setUint32(8, block.first, true);
  view.setUint32(12, block.end, true);
  return bytes;
}

/** The blocks a (V, C) table binds in on `device`, and each block's binding. */
export function tableBlocks(device: GPUDevice, table: BufferRef, V: number, C: number, what: string): { block: RowBlock; ref: BufferRef }[] {
  const blocks = rowBlocks(V, C, bindingLimit(device), what);
  if (blocks.length === 1) return [{ block: blocks[0], ref: table }];
  return blocks.map((block) => ({ block, ref: subBinding(table, block.first * C * 4, (block.end - block.first) * C * 4) }));
}

function launch(
  device: GPUDevice,
  entry: 'forward' | 'backward',
  rows: number,
  C: number,
  block: RowBlock,
  accumulate: boolean,
  buffers: Record<number, BufferRef>,
): Launch {
  const pipeline = computePipeline(device, `embedding.${entry}`, code, { WG, ACCUMULATE: Number(accumulate) }, entry);
  const params = uploadUniform(device, `embedding.${entry}.params`, embeddingParams(rows, C, block));
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

/**
 * The forward: one launch, or one per row block of wte when it exceeds a binding (each writes the
 * rows whose token lies in its block). V defaults to the rows wte holds.
 */
export function createEmbedding(device: GPUDevice, shape: { N: number; C: number; V?: number }, b: EmbeddingBuffers): Launch[] {
  const { N, C } = shape;
  const V = shape.V ?? Math.floor(refBytes(b.wte) / (4 * C));
  checkLength(b.tokens, N, 'tokens');
  checkLength(b.positions, N, 'positions');
  checkLength(b.out, N * C, 'out');
  checkLength(b.wte, V * C, 'wte');
  return tableBlocks(device, b.wte, V, C, 'embedding wte').map(({ block, ref }) =>
    launch(device, 'forward', N, C, block, false, { 1: b.tokens, 2: b.positions, 3: ref, 4: b.wpe, 5: b.out }),
  );
}

/** Inverse indices of one batch's tokens and positions, uploaded once and shared by every backward. */
export interface EmbeddingIndex {
  tokenOrder: BufferRef; // (N) u32
  tokenStart: BufferRef; // (V + 1) u32
  positionOrder: BufferRef; // (N) u32
  positionStart: BufferRef; // (P + 1) u32
  destroy(): void;
}

export function uploadEmbeddingIndex(device: GPUDevice, tokens: ArrayLike<number>, positions: ArrayLike<number>, V: number, P: number): EmbeddingIndex {
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
 * Launches for dwte (one per row block), then dwpe. `accumulate` adds into both; `accumulateWte`
 * into dwte alone (in the model, dwte first receives the tied head's gradient and this adds the
 * embedding's to it).
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
    ...tableBlocks(device, b.dwte, V, C, 'embedding dwte').map(({ block, ref }) =>
      launch(device, 'backward', block.end - block.first, C, block, accumulate || !!options.accumulateWte, {
        6: b.dOut,
        7: index.tokenOrder,
        8: index.tokenStart,
        9: ref,
      }),
    ),
    launch(device, 'backward', P, C, { first: 0, end: P }, accumulate, { 6: b.dOut, 7: index.positionOrder, 8: index.positionStart, 9: b.dwpe }),
  ];
}
