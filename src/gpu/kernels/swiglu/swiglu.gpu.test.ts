// swiglu.wgsl against its float64 reference, gates from −100 to 100 (silu's saturated ends included).

import { describe, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { randomActivations } from '../kernels.testing';
import { createSwiglu } from './swiglu';
import { swigluReference } from './swiglu.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

describe('swiglu', () => {
  for (const [R, FF] of [
    [1, 1],
    [7, 96],
    [40, 300],
  ] as const) {
    it(`(${R}, 2·${FF}) -> (${R}, ${FF}) within 1e-6 relative`, async () => {
      const { device } = gpu;
      const gateUp = randomActivations(R + FF, R * 2 * FF).map((v, i) => (i % (2 * FF) < FF ? v * 4 : v));
      gateUp[0] = -100;
      if (FF > 1) gateUp[1] = 100;
      const out = createStorage(device, 'test.out', R * FF * 4);
      await submitValidated(device, 'test.swiglu', () => [createSwiglu(device, { R, FF }, { gateUp: uploadStorage(device, 'test.gateUp', gateUp), out })]);
      expectClose(await readFloat32(device, out, R * FF), swigluReference(gateUp, R, FF), { abs: 1e-6, rel: 1e-6, label: 'out' });
    });
  }
});
