// What one storage binding may hold on a device, and how a table too large for it is split into
// row blocks that each bind on their own: GPT-2's token embedding (V, C) = 50257 × 768 × 4 bytes
// = 154 MB exceeds the 128 MiB that many adapters allow, so the embedding and the tied head read it
// block by block. createGpu requests the adapter's own limits; tests lower them with setBindingLimit.

/** Rows of a block are a multiple of this: offsets stay 256-byte aligned for any C, and so do column offsets into (·, V) logits. */
export const BLOCK_ROWS_ALIGN = 64;

/** The adapter cannot hold what was asked of it (a buffer or binding over its limits): no retry helps. */
export class GpuLimitError extends Error {
  override readonly name = 'GpuLimitError';
}

const lowered = new WeakMap<GPUDevice, number>();

/** Largest byte size of one storage binding on `device` (a buffer is no larger than maxBufferSize either). */
export function bindingLimit(device: GPUDevice): number {
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  return Math.min(limit, lowered.get(device) ?? limit);
}

/** Makes every split on `device` use at most `bytes` per binding (tests split tiny models); undefined restores the device's. */
export function setBindingLimit(device: GPUDevice, bytes: number | undefined): void {
  if (bytes === undefined) lowered.delete(device);
  else lowered.set(device, bytes);
}

/** A block of a table's rows: rows first .. end - 1. */
export interface RowBlock {
  first: number;
  end: number;
}

/**
 * Row blocks of a (rows, width) f32 table, each at most `limit` bytes, all but the last a multiple
 * of BLOCK_ROWS_ALIGN rows. One block when the whole table fits; an error when not even one
 * aligned block of rows does.
 */
export function rowBlocks(rows: number, width: number, limit: number, what: string): RowBlock[] {
  const rowBytes = width * 4;
  if (rows * rowBytes <= limit) return [{ first: 0, end: rows }];
  const per = Math.floor(limit / rowBytes / BLOCK_ROWS_ALIGN) * BLOCK_ROWS_ALIGN;
  if (per === 0) {
    throw new GpuLimitError(`${what}: ${BLOCK_ROWS_ALIGN} rows of ${rowBytes} bytes do not fit one binding of ${limit} bytes (maxStorageBufferBindingSize)`);
  }
  const blocks: RowBlock[] = [];
  for (let first = 0; first < rows; first += per) blocks.push({ first, end: Math.min(rows, first + per) });
  return blocks;
}

/** A range of a binding: `bytes` from `offset` within it (offset a multiple of 256). */
export function subBinding(ref: GPUBuffer | GPUBufferBinding, offset: number, bytes: number): GPUBufferBinding {
  if ('buffer' in ref && !('mapState' in ref)) return { buffer: ref.buffer, offset: (ref.offset ?? 0) + offset, size: bytes };
  return { buffer: ref as GPUBuffer, offset, size: bytes };
}
