import { describe, it } from 'vitest';
import type { Gpu } from '../../runtime/device';
import { transpose, uniformSource, useGpu } from '../../runtime/gpu.testing';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createMatmulBackward, type MatmulBackwardOptions } from './matmul-backward';
import { describeMatmulVariant, type MatmulVariant } from '../matmul/matmul';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { matmulBackwardRef } from './matmul-backward.reference';
import { matmulRef } from '../matmul/matmul.reference';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
useGpu((g) => (gpu = g));
const uniform = uniformSource(23);

const TOLERANCE = { abs: 1e-4, rel: 1e-4 };

interface Case {
  M: number;
  K: number;
  N: number;
  gelu?: boolean;
  bias?: boolean;
  options?: Omit<MatmulBackwardOptions, 'variant'>;
}

async function check(variant: MatmulVariant, { M, K, N, gelu = false, bias = true, options = {} }: Case): Promise<void> {
  const { device } = gpu;
  const x = uniform(M * K); // (M, K)
  const w = uniform(K * N); // (K, N)
  const dY = uniform(M * N); // (M, N)
  const pre = gelu ? Float32Array.from(matmulRef(x, w, null, M, K, N)) : null; // (M, N), as the forward's STORE_PRE
  const dx0 = uniform(M * K);
  const dw0 = uniform(K * N);
  const dbias0 = uniform(N);
  const b = {
    x: uploadStorage(device, 'test.x', x),
    w: uploadStorage(device, 'test.w', options.transB ? transpose(w, K, N) : w),
    dY: uploadStorage(device, 'test.dY', dY),
    pre: pre ? uploadStorage(device, 'test.pre', pre) : undefined,
    dPre: pre ? createStorage(device, 'test.dPre', M * N * 4) : undefined,
    dx: uploadStorage(device, 'test.dx', dx0),
    dw: uploadStorage(device, 'test.dw', options.transB ? transpose(dw0, K, N) : dw0),
    dbias: bias ? uploadStorage(device, 'test.dbias', dbias0) : undefined,
  };
  const launches = await submitValidated(device, 'test.matmulBackward', () => createMatmulBackward(device, { M, K, N }, b, { ...options, variant }));
  const want = matmulBackwardRef(x, w, dY, M, K, N, pre);
  if (options.accumulateDx) want.dx.forEach((_, i) => (want.dx[i] += dx0[i]));
  if (options.accumulateParams) {
    want.dw.forEach((_, i) => (want.dw[i] += dw0[i]));
    want.dbias.forEach((_, i) => (want.dbias[i] += dbias0[i]));
  }
  const label = `${describeMatmulVariant(variant)} M=${M} K=${K} N=${N} gelu=${gelu} ${JSON.stringify(options)}`;
  expectClose(await readFloat32(device, b.dx, M * K), want.dx, { ...TOLERANCE, label: `${label} dx` });
  const dw = await readFloat32(device, b.dw, K * N);
  expectClose(options.transB ? transpose(dw, N, K) : dw, want.dw, { ...TOLERANCE, label: `${label} dw` });
  if (b.dbias) expectClose(await readFloat32(device, b.dbias, N), want.dbias, { ...TOLERANCE, label: `${label} dbias` });
  releaseLaunches(launches);
  Object.values(b).forEach((buf) => buf?.destroy());
}

const VARIANTS: MatmulVariant[] = [
  { kind: 'blocked', wgX: 8, wgY: 8 },
  { kind: 'tiled', wgX: 8, wgY: 8, tileK: 8 },
];

const CASES: Case[] = [
  { M: 1, K: 1, N: 1 },
  { M: 37, K: 19, N: 53 },
  { M: 37, K: 19, N: 53, gelu: true },
  { M: 20, K: 9, N: 31, gelu: true, bias: false },
  { M: 37, K: 19, N: 53, bias: false, options: { transB: true } },
  { M: 29, K: 40, N: 11, gelu: true, options: { accumulateDx: true, accumulateParams: true } },
  { M: 128, K: 64, N: 96 },
];

describe('matmul backward', () => {
  for (const variant of VARIANTS) {
    describe(describeMatmulVariant(variant), () => {
      for (const c of CASES) {
        const flags = [c.gelu && 'gelu', c.bias !== false && 'bias', ...Object.keys(c.options ?? {})].filter(Boolean).join('+');
        it(`M=${c.M} K=${c.K} N=${c.N} ${flags}`, () => check(variant, c));
      }
    });
  }
});
