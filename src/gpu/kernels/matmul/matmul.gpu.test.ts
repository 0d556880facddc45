import { describe, expect, it } from 'vitest';
import type { Gpu } from '../../runtime/device';
import { transpose, uniformSource, useGpu } from '../../runtime/gpu.testing';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { describeMatmulVariant, createMatmul, type MatmulOptions, type MatmulVariant } from './matmul';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { MATMUL_CANDIDATES } from './matmul-autotune';
import { matmulRef } from './matmul.reference';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
useGpu((g) => (gpu = g));
const uniform = uniformSource(5);

// fp32 sums of K products of values in [-1, 1] against a float64 reference.
const TOLERANCE = { abs: 1e-4, rel: 1e-4 };

interface Case {
  M: number;
  K: number;
  N: number;
  options?: Omit<MatmulOptions, 'variant'>;
  bias?: boolean;
  pre?: boolean;
}

async function check(variant: MatmulVariant, { M, K, N, options = {}, bias = false, pre = false }: Case): Promise<void> {
  const { device } = gpu;
  const x = uniform(M * K); // (M, K)
  const w = uniform(K * N); // (K, N)
  const b = bias ? uniform(N) : null;
  const y0 = uniform(M * N); // the prior contents of y, summed into with accumulate
  const X = uploadStorage(device, 'test.x', options.transA ? transpose(x, M, K) : x);
  const W = uploadStorage(device, 'test.w', options.transB ? transpose(w, K, N) : w);
  const B = b ? uploadStorage(device, 'test.bias', b) : undefined;
  const Y = uploadStorage(device, 'test.y', y0);
  const P = pre ? createStorage(device, 'test.pre', M * N * 4) : undefined;
  const [launch] = await submitValidated(device, 'test.matmul', () => [
    createMatmul(device, { M, K, N }, { x: X, w: W, bias: B, y: Y, pre: P }, { ...options, variant }),
  ]);
  const got = await readFloat32(device, Y, M * N);
  const label = `${describeMatmulVariant(variant)} M=${M} K=${K} N=${N} ${JSON.stringify(options)}`;
  const want = matmulRef(x, w, b, M, K, N, !!options.gelu);
  if (options.accumulate) for (let i = 0; i < want.length; i++) want[i] += y0[i];
  expectClose(got, want, { ...TOLERANCE, label });
  if (P) expectClose(await readFloat32(device, P, M * N), matmulRef(x, w, b, M, K, N, false), { ...TOLERANCE, label: `${label} pre` });
  releaseLaunches([launch]);
  for (const buffer of [X, W, B, Y, P]) buffer?.destroy();
}

// Every flag on one variant of each kind; every autotune candidate (a real GPU may pick any) and odd
// workgroup shapes on the cases that move the edges and the strides.
const FULL: MatmulVariant[] = [
  { kind: 'blocked', wgX: 8, wgY: 8 },
  { kind: 'tiled', wgX: 8, wgY: 8, tileK: 8 },
];
const key = describeMatmulVariant;
const ODD_SHAPES: MatmulVariant[] = [
  { kind: 'blocked', wgX: 2, wgY: 4 },
  { kind: 'tiled', wgX: 4, wgY: 16, tileK: 4 },
];
const OTHERS = [...MATMUL_CANDIDATES.software, ...MATMUL_CANDIDATES.hardware, ...ODD_SHAPES].filter(
  (v, i, all) => all.findIndex((u) => key(u) === key(v)) === i && !FULL.some((u) => key(u) === key(v)),
);
const VARIANTS = [...FULL, ...OTHERS];

const CASES: Case[] = [
  { M: 1, K: 1, N: 1 },
  { M: 37, K: 19, N: 53 },
  { M: 64, K: 64, N: 64 },
  { M: 9, K: 2, N: 17 },
  { M: 3, K: 512, N: 45 },
  { M: 37, K: 19, N: 53, bias: true },
  { M: 37, K: 19, N: 53, bias: true, options: { gelu: true }, pre: true },
  { M: 6, K: 7, N: 9, options: { gelu: true } },
  { M: 37, K: 19, N: 53, options: { transA: true } },
  { M: 37, K: 19, N: 53, options: { transB: true }, bias: true },
  { M: 21, K: 33, N: 17, options: { transA: true, transB: true } },
  { M: 37, K: 19, N: 53, options: { accumulate: true }, bias: true },
  { M: 5, K: 0, N: 7, bias: true },
];

const EDGE_CASES: Case[] = [
  { M: 37, K: 19, N: 53, bias: true, options: { gelu: true }, pre: true },
  { M: 21, K: 33, N: 17, options: { transA: true, transB: true } },
  { M: 3, K: 512, N: 45 },
];

describe('matmul.wgsl', () => {
  for (const variant of VARIANTS) {
    const full = FULL.includes(variant);
    describe(describeMatmulVariant(variant), () => {
      for (const c of full ? CASES : EDGE_CASES) {
        const flags = [c.bias && 'bias', c.pre && 'pre', ...Object.keys(c.options ?? {})].filter(Boolean).join('+') || 'plain';
        it(`M=${c.M} K=${c.K} N=${c.N} ${flags}`, () => check(variant, c));
      }
    });
  }

  it('refuses buffers smaller than the shape', () => {
    const { device } = gpu;
    const small = createStorage(device, 'test.small', 4 * 10);
    expect(() => createMatmul(device, { M: 4, K: 4, N: 4 }, { x: small, w: small, y: small })).toThrow(/reads 16 elements/);
    small.destroy();
  });
});
