// Matmul throughput in GFLOP/s for y = x·W at 256³, 512³ and 1024³: matmul.wgsl (the autotuned variant
// and the other candidates), the one-invocation-per-output baseline matmul-naive.wgsl, a plain
// JavaScript i-k-j loop, and TensorFlow.js 4.22's WebGPU backend in this process on the same adapter.
//   node --import ./scripts/register.mjs src/gpu/kernels/matmul/matmul.bench.ts [sizes, e.g. 256,512]
// Each GPU timing submits a batch of dispatches and awaits the queue once; the figure is the median
// of a few batches after a warm-up. The implementations take turns batch by batch, so a change in
// the machine's load (the CPUs are shared) hits them alike. Every result is checked against the JS
// loop's output.

import { Worker } from 'node:worker_threads';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { adapterLine, createGpu, gpuEntryPoint, type Gpu } from '../../runtime/device';
import { encodeLaunches, releaseLaunches, type Launch } from '../../runtime/kernel';
import { createMatmul, describeMatmulVariant, type MatmulVariant } from './matmul';
import { MATMUL_CANDIDATES, matmulTuningFor, pickMatmulVariant } from './matmul-autotune';
import { createMatmulNaive } from '../matmul-naive/matmul-naive';
import { createRng } from '../../../util/prng';

const sizes = (process.argv[2] ?? '256,512,1024').split(',').map(Number);

interface Measurement {
  gflops: number;
  maxDiff: number; // max |result - JS loop result|
}

interface Operands {
  x: Float32Array; // (S, S)
  w: Float32Array; // (S, S)
  y: Float32Array; // (S, S): the JS loop's result, the reference of every other
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const gflops = (S: number, ms: number) => (2 * S * S * S) / (ms * 1e6);
/** Dispatches per timed batch and batches timed, by size: about 0.05-2 s per batch on SwiftShader. */
const plan = (S: number) => (S <= 256 ? { batch: 4, runs: 5 } : S <= 512 ? { batch: 2, runs: 5 } : { batch: 1, runs: 3 });

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

/**
 * The JS loop, y (S, S) = x (S, S) · w (S, S) row-major in i-k-j order (the inner loop streams rows).
 * It runs in a worker thread: createGpu lowers the main thread's priority on SwiftShader, and a
 * worker takes its turns between the GPU batches, under the same machine load.
 */
const JS_LOOP = `
const { parentPort, workerData: { x, w, S } } = require('node:worker_threads');
function matmul() {
  const y = new Float32Array(S * S);
  for (let i = 0; i < S; i++) {
    const yRow = i * S;
    for (let k = 0; k < S; k++) {
      const a = x[i * S + k];
      const wRow = k * S;
      for (let j = 0; j < S; j++) y[yRow + j] += a * w[wRow + j];
    }
  }
  return y;
}
parentPort.on('message', () => {
  const t0 = performance.now();
  const y = matmul();
  parentPort.postMessage({ y, ms: performance.now() - t0 });
});
`;

/** A contestant: `run` times one batch and returns milliseconds per matmul; `output` is its result. */
interface Timer {
  run(): Promise<number>;
  output(): Promise<ArrayLike<number>>;
  close(): Promise<void>;
}

function jsLoopTimer(x: Float32Array, w: Float32Array, S: number): Timer {
  const worker = new Worker(JS_LOOP, { eval: true, workerData: { x, w, S } });
  let last: Float32Array | undefined;
  const once = () =>
    new Promise<{ y: Float32Array; ms: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
      worker.postMessage('run');
    });
  return {
    run: async () => {
      const { y, ms } = await once();
      last = y;
      return ms;
    },
    output: async () => last ?? (await once()).y,
    close: async () => void (await worker.terminate()),
  };
}

const gpu = await createGpu();
const { device } = gpu;
const picked = await pickMatmulVariant(gpu);
const tuning = matmulTuningFor(gpu.info)!;
console.error(
  `autotune picked ${describeMatmulVariant(picked)} (` +
    tuning.measured.map((m) => `${describeMatmulVariant(m.variant)} ${m.gflops.toFixed(2)}`).join(', ') +
    ' GFLOP/s at 256³)',
);

function launchTimer(S: number, data: Operands, make: (b: { x: GPUBuffer; w: GPUBuffer; y: GPUBuffer }) => Launch): Timer {
  const x = uploadStorage(device, 'bench.x', data.x);
  const w = uploadStorage(device, 'bench.w', data.w);
  const y = createStorage(device, 'bench.y', S * S * 4);
  const launch = make({ x, w, y });
  const { batch } = plan(S);
  return {
    run: async () => {
      const t0 = performance.now();
      const encoder = device.createCommandEncoder({ label: 'bench.encoder' });
      const pass = encoder.beginComputePass({ label: 'bench.pass' });
      for (let i = 0; i < batch; i++) encodeLaunches(pass, [launch]);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      return (performance.now() - t0) / batch;
    },
    output: () => readFloat32(device, y, S * S),
    close: async () => {
      releaseLaunches([launch]);
      [x, w, y].forEach((b) => b.destroy());
    },
  };
}

/** The parts of TF.js's WebGPU backend used to submit its queued work without reading it back. */
interface TfBackend {
  device: GPUDevice;
  commandEncoder: GPUCommandEncoder | null;
  endComputePassEncoder(): void;
  submitQueue(): void;
}

/** TensorFlow.js's WebGPU backend, which finds the adapter through navigator.gpu as in a browser. */
async function loadTf(gpuObject: GPU) {
  (globalThis as { navigator?: unknown }).navigator = { gpu: gpuObject };
  const tf = await import('@tensorflow/tfjs-core');
  await import('@tensorflow/tfjs-backend-webgpu');
  if (!(await tf.setBackend('webgpu'))) throw new Error('TensorFlow.js: the webgpu backend failed to initialise');
  await tf.ready();
  return tf;
}

function tfTimer(tf: Awaited<ReturnType<typeof loadTf>>, S: number, data: Operands): Timer {
  const backend = tf.backend() as unknown as TfBackend;
  const a = tf.tensor2d(data.x, [S, S]);
  const b = tf.tensor2d(data.w, [S, S]);
  const { batch } = plan(S);
  return {
    run: async () => {
      const t0 = performance.now();
      const outs = [];
      for (let i = 0; i < batch; i++) outs.push(tf.matMul(a, b));
      // What TF.js does before a readback, without the readback: close its pass and submit.
      backend.endComputePassEncoder();
      if (backend.commandEncoder) backend.submitQueue();
      await backend.device.queue.onSubmittedWorkDone();
      const ms = (performance.now() - t0) / batch;
      outs.forEach((t) => t.dispose());
      return ms;
    },
    output: async () => {
      const y = tf.matMul(a, b);
      const values = await y.data();
      y.dispose();
      return values;
    },
    close: async () => {
      a.dispose();
      b.dispose();
    },
  };
}

const others = MATMUL_CANDIDATES[gpu.info.isSoftware ? 'software' : 'hardware'].filter((v) => describeMatmulVariant(v) !== describeMatmulVariant(picked));
const variants: MatmulVariant[] = [picked, ...others];
const columns = [...variants.map((v) => `ours ${describeMatmulVariant(v)}`), 'naive WGSL', 'TF.js webgpu', 'JS loop'];
const tf = await loadTf(await gpuEntryPoint());
const rng = createRng(1);
const results = new Map<number, Measurement[]>();
for (const S of sizes) {
  const x = Float32Array.from({ length: S * S }, () => rng.next() * 2 - 1);
  const w = Float32Array.from({ length: S * S }, () => rng.next() * 2 - 1);
  const js = jsLoopTimer(x, w, S);
  await js.run(); // warm-up; its output is the reference of every other result
  const data: Operands = { x, w, y: Float32Array.from(await js.output()) };
  const timers: Timer[] = [
    ...variants.map((variant) => launchTimer(S, data, (b) => createMatmul(device, { M: S, K: S, N: S }, b, { variant }))),
    launchTimer(S, data, (b) => createMatmulNaive(device, { M: S, K: S, N: S }, b)),
    tfTimer(tf, S, data),
    js,
  ];
  const diffs: number[] = [];
  for (const t of timers) {
    await t.run(); // warm-up: pipelines compile, caches fill
    diffs.push(maxDiff(await t.output(), data.y));
  }
  const times: number[][] = timers.map(() => []);
  for (let r = 0; r < plan(S).runs; r++) for (const [i, t] of timers.entries()) times[i].push(await t.run());
  for (const t of timers) await t.close();
  const row = times.map((ts, i) => ({ gflops: gflops(S, median(ts)), maxDiff: diffs[i] }));
  results.set(S, row);
  console.error(`${S}³: ` + row.map((m, i) => `${columns[i]} ${m.gflops.toFixed(2)}`).join(', '));
}

printTable(gpu, columns, results);
gpu.destroy();
process.exit(0); // TF.js keeps its own device alive

function printTable(g: Gpu, names: string[], rows: Map<number, Measurement[]>): void {
  const ours = 0;
  const tfCol = names.indexOf('TF.js webgpu');
  const jsCol = names.indexOf('JS loop');
  const header = ['size', ...names, 'ours/TF.js', 'ours/JS'];
  const lines = [...rows].map(([S, row]) => [
    `${S}³`,
    ...row.map((m) => m.gflops.toFixed(2)),
    `${(row[ours].gflops / row[tfCol].gflops).toFixed(1)}×`,
    `${(row[ours].gflops / row[jsCol].gflops).toFixed(1)}×`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i])).join(' | ')} |`;
  console.log(`matmul GFLOP/s, fp32, y = x·W with x, W (S, S), on ${adapterLine(g.info)}; ours = the autotuned ${names[ours].slice(5)}`);
  console.log(fmt(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const l of lines) console.log(fmt(l));
  const worst = Math.max(...[...rows.values()].flatMap((row) => row.map((m) => m.maxDiff)));
  console.log(`max |diff| of any result vs the JS loop: ${worst.toExponential(2)}`);
}
