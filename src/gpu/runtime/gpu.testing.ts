// Set-up the GPU tests share: one device per test file (and a model on it), created before the
// file's tests and destroyed after them, and the random inputs and transposes the kernel tests use.

import { afterAll, beforeAll } from 'vitest';
import { createGpu, type Gpu } from './device';
import { createGpuModel, type GpuModel } from '../model';
import type { ModelWeights } from '../../model/params';
import { createRng } from '../../util/prng';

/** A device for the file's tests, handed to `set` once it exists. */
export function useGpu(set: (gpu: Gpu) => void): void {
  let gpu: Gpu | undefined;
  beforeAll(async () => set((gpu = await createGpu())));
  afterAll(() => gpu?.destroy());
}

/** A device and `weights` on it for the file's tests, handed to `set` once both exist. */
export function useGpuModel(weights: ModelWeights, set: (gpu: Gpu, model: GpuModel) => void): void {
  let gpu: Gpu | undefined;
  let model: GpuModel | undefined;
  beforeAll(async () => {
    gpu = await createGpu();
    model = createGpuModel(gpu, weights);
    set(gpu, model);
  });
  afterAll(() => {
    model?.destroy();
    gpu?.destroy();
  });
}

/** Draws of n values uniform in [-1, 1), from one stream seeded with `seed`. */
export function uniformSource(seed: number): (n: number) => Float32Array {
  const rng = createRng(seed);
  return (n) => Float32Array.from({ length: n }, () => rng.next() * 2 - 1);
}

/** (R, C) row-major -> (C, R) row-major. */
export function transpose(a: ArrayLike<number>, R: number, C: number): Float32Array {
  const t = new Float32Array(R * C);
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) t[c * R + r] = a[r * C + c];
  return t;
}
