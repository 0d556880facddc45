// gather-rows.wgsl against its reference: the rows a request list names, copied bit for bit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createGatherRows } from './gather-rows';
import { gatherRowsReference } from './gather-rows.reference';
import { encodeLaunches } from '../../runtime/kernel';
import { subBinding } from '../../runtime/limits';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

async function gather(x: Float32Array, rows: number[], C: number, offset = 0): Promise<Float32Array> {
  const { device } = gpu;
  const X = uploadStorage(device, 'test.x', x);
  const R = uploadStorage(device, 'test.rows', Uint32Array.from([...Array<number>(offset).fill(0), ...rows]));
  const out = createStorage(device, 'test.out', Math.max(rows.length * C * 4, 4));
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  // The requests of a block bind as a range of a longer list (scoring binds each block's slice).
  const rowRef = offset ? subBinding(R, offset * 4, rows.length * 4) : R;
  encodeLaunches(pass, [createGatherRows(device, { R: rows.length, C, N: x.length / C }, { x: X, rows: rowRef, out })]);
  pass.end();
  device.queue.submit([encoder.finish()]);
  return readFloat32(device, out, rows.length * C);
}

describe('gather-rows.wgsl', () => {
  it('copies the named rows exactly, repeats and any order included', async () => {
    const C = 7;
    const x = Float32Array.from({ length: 10 * C }, (_, i) => Math.sin(i) * 1e3 + 1 / (i + 1));
    const rows = [3, 0, 9, 3, 5];
    const got = await gather(x, rows, C);
    expect(Array.from(got)).toEqual(Array.from(gatherRowsReference(x, rows, C)));
  });

  it("reads its requests from a 256-byte-aligned slice of a longer list, at GPT-2's width", async () => {
    const C = 768;
    const N = 300;
    const x = Float32Array.from({ length: N * C }, (_, i) => (i % 9973) - 0.25);
    const rows = Array.from({ length: 200 }, (_, j) => (j * 37) % N);
    const got = await gather(x, rows, C, 64);
    const want = gatherRowsReference(x, rows, C);
    let first = -1;
    for (let i = 0; i < want.length && first < 0; i++) if (got[i] !== want[i]) first = i;
    expect(first, first >= 0 ? `first difference at ${first}: ${got[first]} vs ${want[first]}` : '').toBe(-1);
  });
});
