// Picks the matmul variant an adapter runs fastest: a short measurement of a few candidates, once per
// adapter, cached in memory and in a storage (the browser's localStorage; the CLI's file in its cache
// directory). SwiftShader prefers the barrier-free
// `blocked` variant, real GPUs the `tiled` one; measuring settles the cases in between.

import { createStorage } from '../../runtime/buffers';
import type { AdapterSummary, Gpu } from '../../runtime/device';
import { encodeLaunches, releaseLaunches } from '../../runtime/kernel';
import { createMatmul, describeMatmulVariant, setMatmulVariant, type MatmulShape, type MatmulVariant } from './matmul';

/**
 * Candidates per kind of adapter. On SwiftShader a tiled pipeline alone takes ~0.3-0.6 s to compile
 * and loses to the blocked ones, so software adapters measure only the smallest tiled shape.
 */
export const MATMUL_CANDIDATES: { software: readonly MatmulVariant[]; hardware: readonly MatmulVariant[] } = {
  software: [
    { kind: 'blocked', wgX: 8, wgY: 8 },
    { kind: 'blocked', wgX: 16, wgY: 4 },
    { kind: 'tiled', wgX: 8, wgY: 8, tileK: 16 },
  ],
  hardware: [
    { kind: 'tiled', wgX: 16, wgY: 16, tileK: 16 },
    { kind: 'tiled', wgX: 8, wgY: 8, tileK: 16 },
    { kind: 'tiled', wgX: 16, wgY: 8, tileK: 8 },
    { kind: 'blocked', wgX: 8, wgY: 8 },
  ],
};

export interface MatmulTuning {
  variant: MatmulVariant;
  /** GFLOP/s of each candidate, fastest first; empty when the choice came from the storage. */
  measured: { variant: MatmulVariant; gflops: number }[];
  source: 'measured' | 'stored';
}

/** Where choices outlive the process: the part of the Web Storage interface the autotune uses. */
export interface TuningStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

const STORAGE_KEY = 'mw.matmulVariant.v1';
const tunings = new Map<string, MatmulTuning>();

export function adapterKey(info: AdapterSummary): string {
  return [info.vendor, info.architecture, info.device, info.description].join('|');
}

export function matmulTuningFor(info: AdapterSummary): MatmulTuning | undefined {
  return tunings.get(adapterKey(info));
}

/** Forgets the in-memory choices (the storage keeps its own). */
export function clearMatmulTunings(): void {
  tunings.clear();
}

export interface PickOptions {
  candidates?: readonly MatmulVariant[];
  /** Square problem size measured; default 256 on software adapters (keeps the pick under 2 s), 1024 on GPUs. */
  size?: number;
  /** Where the choice is kept across processes; default the global localStorage when there is one. */
  storage?: TuningStorage;
}

/**
 * The fastest candidate on this adapter, measured at most once per adapter and page/process, and
 * made the default of createMatmul on gpu.device.
 */
export async function pickMatmulVariant(gpu: Gpu, options: PickOptions = {}): Promise<MatmulVariant> {
  const key = adapterKey(gpu.info);
  let tuning = tunings.get(key);
  if (!tuning) {
    const candidates = options.candidates ?? MATMUL_CANDIDATES[gpu.info.isSoftware ? 'software' : 'hardware'];
    const storage = options.storage ?? (typeof localStorage === 'undefined' ? undefined : localStorage);
    const stored = storage ? readStored(storage, key, candidates) : undefined;
    if (stored) {
      tuning = { variant: stored, measured: [], source: 'stored' };
    } else {
      const size = options.size ?? (gpu.info.isSoftware ? 256 : 1024);
      const measured = await measureMatmulVariants(gpu.device, candidates, { M: size, K: size, N: size });
      tuning = { variant: measured[0].variant, measured, source: 'measured' };
      if (storage) writeStored(storage, key, tuning.variant);
    }
    tunings.set(key, tuning);
  }
  setMatmulVariant(gpu.device, tuning.variant);
  return tuning.variant;
}

/**
 * GFLOP/s of each variant on one shape, fastest first: one warm-up, then the best of `trials` timed
 * batches of `batch` dispatches, each batch submitted whole and awaited once.
 */
export async function measureMatmulVariants(
  device: GPUDevice,
  variants: readonly MatmulVariant[],
  shape: MatmulShape,
  { batch = 1, trials = 2 } = {},
): Promise<{ variant: MatmulVariant; gflops: number }[]> {
  const { M, K, N } = shape;
  const x = createStorage(device, 'matmulAutotune.x', M * K * 4); // (M, K)
  const w = createStorage(device, 'matmulAutotune.w', K * N * 4); // (K, N)
  const y = createStorage(device, 'matmulAutotune.y', M * N * 4); // (M, N)
  const results: { variant: MatmulVariant; gflops: number }[] = [];
  try {
    for (const variant of variants) {
      const launch = createMatmul(device, shape, { x, w, y }, { variant });
      const run = async (count: number) => {
        const encoder = device.createCommandEncoder({ label: `matmulAutotune.${describeMatmulVariant(variant)}` });
        const pass = encoder.beginComputePass();
        for (let i = 0; i < count; i++) encodeLaunches(pass, [launch]);
        pass.end();
        device.queue.submit([encoder.finish()]);
        await device.queue.onSubmittedWorkDone();
      };
      await run(1);
      let best = Infinity;
      for (let trial = 0; trial < trials; trial++) {
        const t0 = performance.now();
        await run(batch);
        best = Math.min(best, (performance.now() - t0) / batch);
      }
      releaseLaunches([launch]);
      results.push({ variant, gflops: (2 * M * K * N) / (best * 1e6) });
    }
  } finally {
    [x, w, y].forEach((b) => b.destroy());
  }
  return results.sort((a, b) => b.gflops - a.gflops);
}

function sameVariant(a: MatmulVariant, b: MatmulVariant): boolean {
  return describeMatmulVariant(a) === describeMatmulVariant(b);
}

function readStored(storage: TuningStorage, key: string, candidates: readonly MatmulVariant[]): MatmulVariant | undefined {
  try {
    const all = JSON.parse(storage.getItem(STORAGE_KEY) ?? '{}') as Record<string, MatmulVariant>;
    const stored = all[key];
    return stored ? candidates.find((c) => sameVariant(c, stored)) : undefined;
  } catch {
    return undefined; // unreadable or corrupt storage: measure again
  }
}

function writeStored(storage: TuningStorage, key: string, variant: MatmulVariant): void {
  let all: Record<string, MatmulVariant> = {};
  try {
    all = JSON.parse(storage.getItem(STORAGE_KEY) ?? '{}') as Record<string, MatmulVariant>;
  } catch {
    // Corrupt entry: replaced below.
  }
  try {
    all[key] = variant;
    storage.setItem(STORAGE_KEY, JSON.stringify(all));
  } catch {
    // Storage full or denied: the in-memory choice still holds for this page.
  }
}
