import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { clearMatmulTunings, MATMUL_CANDIDATES, matmulTuningFor, pickMatmulVariant } from './matmul-autotune';
import { describeMatmulVariant, matmulVariantOf } from './matmul';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());
afterEach(() => {
  clearMatmulTunings();
  delete (globalThis as { localStorage?: unknown }).localStorage;
});

/** The part of the Storage interface the autotune uses, over a Map. */
function fakeLocalStorage(): Map<string, string> {
  const items = new Map<string, string>();
  (globalThis as { localStorage?: unknown }).localStorage = {
    getItem: (k: string) => items.get(k) ?? null,
    setItem: (k: string, v: string) => void items.set(k, v),
  };
  return items;
}

describe('pickMatmulVariant', () => {
  it('measures every candidate once, picks the fastest and makes it the device default', async () => {
    const t0 = performance.now();
    const variant = await pickMatmulVariant(gpu);
    const seconds = (performance.now() - t0) / 1000;
    const tuning = matmulTuningFor(gpu.info)!;
    console.log(`autotune ${seconds.toFixed(2)} s: ` + tuning.measured.map((m) => `${describeMatmulVariant(m.variant)} ${m.gflops.toFixed(2)}`).join(', '));
    expect(tuning.source).toBe('measured');
    expect(tuning.measured.map((m) => describeMatmulVariant(m.variant)).sort()).toEqual(
      MATMUL_CANDIDATES[gpu.info.isSoftware ? 'software' : 'hardware'].map(describeMatmulVariant).sort(),
    );
    for (const m of tuning.measured) expect(m.gflops).toBeGreaterThan(0);
    expect(variant).toBe(tuning.measured[0].variant);
    expect(matmulVariantOf(gpu.device)).toBe(variant);
    // Cached: a second pick with other candidates returns the first choice without measuring.
    expect(await pickMatmulVariant(gpu, { candidates: [MATMUL_CANDIDATES.hardware[0]] })).toBe(variant);
    expect(matmulTuningFor(gpu.info)).toBe(tuning);
  });

  it('stores the choice in localStorage and reads it back in a fresh page', async () => {
    const items = fakeLocalStorage();
    const only = MATMUL_CANDIDATES.software[1];
    const variant = await pickMatmulVariant(gpu, { candidates: [only], size: 32 });
    expect(variant).toBe(only);
    expect(items.size).toBe(1);
    clearMatmulTunings(); // a new page: memory empty, localStorage kept
    const again = await pickMatmulVariant(gpu);
    expect(describeMatmulVariant(again)).toBe(describeMatmulVariant(only));
    expect(matmulTuningFor(gpu.info)!.source).toBe('stored');
    expect(matmulTuningFor(gpu.info)!.measured).toEqual([]);
  });

  it('measures again when the stored entry is corrupt', async () => {
    const items = fakeLocalStorage();
    items.set('mw.matmulVariant.v1', '{not json');
    await pickMatmulVariant(gpu, { candidates: [MATMUL_CANDIDATES.software[0]], size: 32 });
    expect(matmulTuningFor(gpu.info)!.source).toBe('measured');
    expect(JSON.parse(items.get('mw.matmulVariant.v1')!)).toBeTypeOf('object');
  });
});
