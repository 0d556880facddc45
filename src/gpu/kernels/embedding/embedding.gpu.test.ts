import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createEmbedding, createEmbeddingBackward, uploadEmbeddingIndex } from './embedding';
import { inverseIndex, releaseLaunches, submitValidated } from '../../runtime/kernel';
import { setBindingLimit } from '../../runtime/limits';
import { embeddingBackwardRef, embeddingRef } from './embedding.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const rng = createRng(3);
const uniform = (n: number) => Float32Array.from({ length: n }, () => rng.next() * 2 - 1);

interface Case {
  N: number;
  C: number;
  V: number;
  P: number;
}

/** Tokens with repeats (a small vocabulary) and tree-style positions: branches restart at a shared depth. */
function batch({ N, V, P }: Case): { tokens: Uint32Array; positions: Uint32Array } {
  const tokens = Uint32Array.from({ length: N }, () => rng.int(Math.min(V, 5)) * Math.max(1, Math.floor(V / 5)));
  const positions = Uint32Array.from({ length: N }, (_, i) => (i < N / 2 ? i : i - Math.floor(N / 4)) % P);
  return { tokens, positions };
}

interface SplitCase extends Case {
  /** Bytes one binding may hold (setBindingLimit): wte and dwte then bind in blocks of rows. */
  limit?: number;
}

const CASES: SplitCase[] = [
  { N: 1, C: 1, V: 1, P: 1 },
  { N: 37, C: 19, V: 272, P: 64 },
  { N: 200, C: 32, V: 50, P: 128 },
  // Blocks of 64 rows (5 blocks, the last of 16 rows), and of 128 rows (3 blocks).
  { N: 37, C: 19, V: 272, P: 64, limit: 64 * 19 * 4 },
  { N: 200, C: 32, V: 300, P: 128, limit: 128 * 32 * 4 + 100 },
];

describe('embedding.wgsl', () => {
  afterEach(() => setBindingLimit(gpu.device, undefined));

  for (const c of CASES) {
    const { N, C, V, P, limit } = c;
    const blocks = limit ? `, wte in blocks of ${Math.floor(limit / (C * 4) / 64) * 64} rows` : '';
    it(`forward matches the reference for N=${N} C=${C} V=${V} P=${P}${blocks}`, async () => {
      const { device } = gpu;
      setBindingLimit(device, limit);
      const { tokens, positions } = batch(c);
      const wte = uniform(V * C);
      const wpe = uniform(P * C);
      const b = {
        tokens: uploadStorage(device, 'test.tokens', tokens),
        positions: uploadStorage(device, 'test.positions', positions),
        wte: uploadStorage(device, 'test.wte', wte),
        wpe: uploadStorage(device, 'test.wpe', wpe),
        out: createStorage(device, 'test.out', N * C * 4),
      };
      const launches = await submitValidated(device, 'test.embedding', () => createEmbedding(device, { N, C }, b));
      expect(launches).toHaveLength(limit ? Math.ceil(V / (Math.floor(limit / (C * 4) / 64) * 64)) : 1);
      expectClose(await readFloat32(device, b.out, N * C), embeddingRef(tokens, positions, wte, wpe, C), { abs: 1e-6, label: 'embedding' });
      releaseLaunches(launches);
      Object.values(b).forEach((buf) => buf.destroy());
    });

    for (const accumulate of [false, true]) {
      it(`backward matches the reference for N=${N} C=${C} V=${V} P=${P}${blocks}${accumulate ? ', accumulating' : ''}`, async () => {
        const { device } = gpu;
        setBindingLimit(device, limit);
        const { tokens, positions } = batch(c);
        const dOut = uniform(N * C);
        const dwte0 = uniform(V * C);
        const dwpe0 = uniform(P * C);
        const index = uploadEmbeddingIndex(device, tokens, positions, V, P);
        const b = {
          dOut: uploadStorage(device, 'test.dOut', dOut),
          dwte: uploadStorage(device, 'test.dwte', dwte0),
          dwpe: uploadStorage(device, 'test.dwpe', dwpe0),
        };
        const launches = await submitValidated(device, 'test.embeddingBackward', () =>
          createEmbeddingBackward(device, { N, C, V, P }, index, b, { accumulate }),
        );
        const want = embeddingBackwardRef(tokens, positions, dOut, V, P, C);
        if (accumulate) {
          want.dwte.forEach((_, i) => (want.dwte[i] += dwte0[i]));
          want.dwpe.forEach((_, i) => (want.dwpe[i] += dwpe0[i]));
        }
        // Sums of up to N values in [-1, 1].
        expectClose(await readFloat32(device, b.dwte, V * C), want.dwte, { abs: 1e-5, rel: 1e-5, label: 'dwte' });
        expectClose(await readFloat32(device, b.dwpe, P * C), want.dwpe, { abs: 1e-5, rel: 1e-5, label: 'dwpe' });
        releaseLaunches(launches);
        index.destroy();
        Object.values(b).forEach((buf) => buf.destroy());
      });
    }
  }
});

describe('inverseIndex', () => {
  it('lists, for each value, the positions holding it in ascending order', () => {
    const { order, start } = inverseIndex([2, 0, 2, 1, 2], 4);
    expect(Array.from(start)).toEqual([0, 1, 2, 5, 5]);
    expect(Array.from(order)).toEqual([1, 3, 0, 2, 4]);
  });

  it('refuses indices outside the table', () => {
    expect(() => inverseIndex([0, 4], 4)).toThrow(/index 4 at 1/);
  });
});
