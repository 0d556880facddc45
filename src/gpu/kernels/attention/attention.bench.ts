// Tree-masked flash attention: does the time follow the visible pairs, not N²? Same N, C, NH for a
// causal sequence, a packed tree of density ≈ 0.25 and a block-diagonal batch; forward and backward
// times, and time per visible pair relative to causal (1.00 = perfectly proportional).
// Then the kernel variants (register rows vs shared-memory tiles, tile sizes) on this adapter.
// Run: node --import ./scripts/register.mjs src/gpu/kernels/attention/attention.bench.ts [--quick]

import { adapterLine, createGpu } from '../../runtime/device';
import { createStorage, uploadStorage } from '../../runtime/buffers';
import { encodeLaunches, type Launch } from '../../runtime/kernel';
import {
  attentionConfig,
  createAttentionBackward,
  createAttentionForward,
  createAttentionMask,
  type AttentionConfig,
  type AttentionMask,
  type AttentionShape,
} from './attention';
import { causalEnd, maskDensity, packEnds, randomTreeEnd } from './attention-test-masks';
import { createRng } from '../../../util/prng';

const quick = process.argv.includes('--quick');
const N = quick ? 512 : 2048;
const C = 128;
const NH = 4;
const shape: AttentionShape = { NH, HS: C / NH };
const REPEATS = quick ? 5 : 3;

const gpu = await createGpu();
const { device } = gpu;
const rng = createRng(1);
const qkv = uploadStorage(
  device,
  'bench.qkv',
  Float32Array.from({ length: N * 3 * C }, () => rng.normal()),
); // (N, 3C)
const dOut = uploadStorage(
  device,
  'bench.dOut',
  Float32Array.from({ length: N * C }, () => rng.normal()),
); // (N, C)
const buffers = {
  qkv,
  dOut,
  out: createStorage(device, 'bench.out', N * C * 4), // (N, C)
  lse: createStorage(device, 'bench.lse', NH * N * 4), // (NH, N)
  delta: createStorage(device, 'bench.delta', NH * N * 4), // (NH, N)
  dqkv: createStorage(device, 'bench.dqkv', N * 3 * C * 4), // (N, 3C)
};

/** The seed whose random tree is densest-closest to `target` (deterministic). */
function treeOfDensity(target: number): Uint32Array {
  let best = causalEnd(N);
  for (let seed = 1; seed <= 40; seed++) {
    const end = randomTreeEnd(createRng(seed), N, 10 / N);
    if (Math.abs(maskDensity(end) - target) < Math.abs(maskDensity(best) - target)) best = end;
  }
  return best;
}

const masks: [string, Uint32Array][] = [
  ['causal', causalEnd(N)],
  ['tree', treeOfDensity(0.25)],
  ['block-diagonal 8 x N/8', packEnds(Array.from({ length: 8 }, () => causalEnd(N / 8)))],
];

/** Wall time of one submitted pass. */
async function time(launches: Launch[]): Promise<number> {
  const encoder = device.createCommandEncoder({ label: 'bench.encoder' });
  const pass = encoder.beginComputePass({ label: 'bench.pass' });
  encodeLaunches(pass, launches);
  pass.end();
  const started = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  return performance.now() - started;
}

interface Case {
  name: string;
  end: Uint32Array;
  mask: AttentionMask;
  forward: number;
  backward: number;
}

/**
 * Best time of each case's forward and backward over REPEATS rounds, after a warm-up round (pipeline
 * compilation). Rounds interleave the cases and the minimum is kept, because the CPUs SwiftShader
 * runs on are shared with other work: a burst of load then hits one round, not one case.
 */
async function measure(cases: { name: string; end: Uint32Array; config: AttentionConfig }[]): Promise<Case[]> {
  const measured = cases.map(({ name, end, config }) => {
    const mask = createAttentionMask(device, end, config);
    const launches = { forward: [createAttentionForward(device, mask, shape, buffers)], backward: createAttentionBackward(device, mask, shape, buffers) };
    return { name, end, mask, launches, forward: Infinity, backward: Infinity };
  });
  for (let round = 0; round <= REPEATS; round++) {
    for (const c of measured) {
      const forward = await time(c.launches.forward);
      const backward = await time(c.launches.backward);
      if (round > 0) {
        c.forward = Math.min(c.forward, forward);
        c.backward = Math.min(c.backward, backward);
      }
    }
  }
  for (const c of measured) c.mask.destroy();
  return measured;
}

const pad = (s: string | number, n: number) => String(s).padStart(n);
const chosen = attentionConfig(gpu.info);
console.log(`attention bench on ${adapterLine(gpu.info)}: N ${N}, C ${C}, NH ${NH}, HS ${shape.HS}; best of ${REPEATS} interleaved rounds`);
console.log(`config for this adapter: BQ ${chosen.BQ}, BK ${chosen.BK}, ${chosen.shared ? 'shared-memory tiles' : 'register rows'}\n`);
console.log(
  `${'mask'.padEnd(24)} ${pad('density', 7)} ${pad('visible pairs', 13)} ${pad('tile pairs', 14)} ${pad('fwd ms', 8)} ${pad('bwd ms', 8)} ` +
    `${pad('fwd ns/pair', 11)} ${pad('bwd ns/pair', 11)} ${pad('fwd rel', 7)} ${pad('bwd rel', 7)}`,
);
const results = await measure(masks.map(([name, end]) => ({ name, end, config: chosen })));
const causal = results[0];
for (const m of results) {
  const { pairs, visiblePairs, queryTiles, keyTiles } = m.mask.tiles;
  const perPair = (ms: number) => (ms * 1e6) / (visiblePairs * NH); // per visible pair and head
  const relative = (ms: number, causalMs: number) => (ms / visiblePairs / (causalMs / causal.mask.tiles.visiblePairs)).toFixed(2);
  console.log(
    `${m.name.padEnd(24)} ${pad(maskDensity(m.end).toFixed(3), 7)} ${pad(visiblePairs, 13)} ${pad(`${pairs}/${queryTiles * keyTiles}`, 14)} ` +
      `${pad(m.forward.toFixed(1), 8)} ${pad(m.backward.toFixed(1), 8)} ${pad(perPair(m.forward).toFixed(1), 11)} ${pad(perPair(m.backward).toFixed(1), 11)} ` +
      `${pad(relative(m.forward, causal.forward), 7)} ${pad(relative(m.backward, causal.backward), 7)}`,
  );
}

console.log('\nvariants on the tree mask (fwd / bwd ms):');
const variants: AttentionConfig[] = [
  { BQ: 16, BK: 16, shared: false },
  { BQ: 32, BK: 32, shared: false },
  { BQ: 16, BK: 16, shared: true },
  { BQ: 64, BK: 32, shared: true },
];
const tree = masks[1][1];
for (const m of await measure(variants.map((config) => ({ name: '', end: tree, config })))) {
  const { BQ, BK, shared } = m.mask.config;
  console.log(
    `  BQ ${pad(BQ, 2)} BK ${pad(BK, 2)} ${(shared ? 'shared' : 'rows').padEnd(6)}  ${pad(m.forward.toFixed(1), 8)} / ${pad(m.backward.toFixed(1), 8)}   tile pairs ${m.mask.tiles.pairs}`,
  );
}

for (const buffer of Object.values(buffers)) buffer.destroy();
gpu.destroy();
