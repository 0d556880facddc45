// Forward throughput of the default model (issue 5): rows per second through one forward pass
// (embedding → 4 blocks → tied head) for a causal batch of 1024 rows, a block-diagonal batch and the
// packed trees of the two bench/train.ts rollouts, with the share spent in attention. The attention
// kernel's time against visible pairs is the attention benchmark's subject (src/gpu/kernels/attention/), not repeated here.
//   node --expose-gc --import ./scripts/register.mjs bench/forward.ts [--rounds=5]
// Each case's figure is the median of interleaved rounds after a warm-up round; the process's CPU
// time (SwiftShader's threads included) is printed beside wall time, since this machine is shared.

import { availableParallelism, loadavg } from 'node:os';
import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { encodeLaunches } from '../src/gpu/runtime/kernel';
import { createForward, createGpuModel, type BatchInput, type ForwardPass } from '../src/gpu/model';
import { describeConfig, presetConfig } from '../src/model/config';
import { initWeights } from '../src/model/params';
import { buildPlan } from '../src/plan/build';
import { packBatch } from '../src/plan/batch';
import { deriveTree } from '../src/tree/derive';
import { editBatch } from './_batches';

const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5);

const gpu = await createGpu();
const { device } = gpu;
const config = presetConfig('default');
const model = createGpuModel(gpu, initWeights(config, 1));

/** n causal sequences of `length` rows each, block-diagonal in one batch. */
function causalBatch(n: number, length: number): BatchInput {
  const N = n * length;
  const tokens = new Uint32Array(N);
  const positions = new Uint32Array(N);
  const end = new Uint32Array(N);
  for (let i = 0; i < N; i++) {
    tokens[i] = (i * 7919) % 256;
    positions[i] = i % length;
    end[i] = (Math.floor(i / length) + 1) * length;
  }
  return { tokens, positions, end };
}

const packedTree = (placement: 'early' | 'late') => packBatch(buildPlan(deriveTree(editBatch(placement, 1)[0]), 'packed-4d').sequences);

const cases: { name: string; input: BatchInput }[] = [
  { name: 'causal 1 x 1024', input: causalBatch(1, 1024) },
  { name: 'block-diagonal 4 x 256', input: causalBatch(4, 256) },
  { name: 'packed tree, early edits', input: packedTree('early') },
  { name: 'packed tree, late edits', input: packedTree('late') },
];

interface Timing {
  wall: number[];
  cpu: number[];
}

/** Wall and CPU time of one submitted pass, from submit to the queue's completion. */
async function time(record: (pass: GPUComputePassEncoder) => void, into: Timing): Promise<void> {
  const encoder = device.createCommandEncoder({ label: 'bench.encoder' });
  const pass = encoder.beginComputePass({ label: 'bench.pass' });
  record(pass);
  pass.end();
  const cpu = process.cpuUsage();
  const started = performance.now();
  device.queue.submit([encoder.finish()]);
  await device.queue.onSubmittedWorkDone();
  into.wall.push(performance.now() - started);
  const d = process.cpuUsage(cpu);
  into.cpu.push((d.user + d.system) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const visiblePairs = (end: ArrayLike<number>) => {
  let n = 0;
  for (let k = 0; k < end.length; k++) n += end[k] - k;
  return n;
};

const started = performance.now();
console.log(`forward bench on ${adapterLine(gpu.info)}; ${describeConfig(config)}`);
console.log(`median of ${ROUNDS} interleaved rounds after a warm-up round (load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)\n`);

const measured = cases.map((c) => ({
  ...c,
  forward: createForward(model, c.input) as ForwardPass,
  full: { wall: [], cpu: [] } as Timing,
  noAttention: { wall: [], cpu: [] } as Timing,
}));
for (let round = 0; round <= ROUNDS; round++) {
  for (const m of measured) {
    const full: Timing = round ? m.full : { wall: [], cpu: [] };
    const noAttention: Timing = round ? m.noAttention : { wall: [], cpu: [] };
    await time((pass) => m.forward.encode(pass), full);
    // The same launches without the attention dispatches: what the rest of the model costs.
    await time((pass) => encodeLaunches(pass, m.forward.launches), noAttention);
  }
}

const header = ['batch', 'rows', 'visible pairs', 'fwd ms', 'cpu ms', 'attention share', 'rows/s', 'rows/cpu-s'];
const rows = measured.map((m) => {
  const wall = median(m.full.wall);
  const cpu = median(m.full.cpu);
  const attention = 1 - median(m.noAttention.cpu) / cpu;
  return [
    m.name,
    fmt(m.forward.N),
    fmt(visiblePairs(m.input.end)),
    fmt(wall),
    fmt(cpu),
    `${fmt(100 * attention)} %`,
    fmt((m.forward.N * 1000) / wall),
    fmt((m.forward.N * 1000) / cpu),
  ];
});
const table = [header, ...rows];
const widths = header.map((_, i) => Math.max(...table.map((r) => r[i].length)));
for (const r of table) console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
console.log('(attention share: 1 − cpu time without the attention dispatches / cpu time of the whole forward)');
console.log(
  `\n(${fmt((performance.now() - started) / 1000, 1)} s; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores; SwiftShader times are not GPU times)`,
);

for (const m of measured) m.forward.destroy();
model.destroy();
gpu.destroy();
