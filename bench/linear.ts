// The model families' linear layer (src/gpu/kernels/linear) with weights kept as a model folder stores
// them (BF16, F16, F32; (out, in) row-major) against GPT-2's f32 matmul (matmul.wgsl, W read transposed)
// on the same products: the q_proj and gate_proj of SmolLM2-135M and Qwen3-0.6B over 256 rows.
//   node --import ./scripts/register.mjs bench/linear.ts [rows]
// Each timing submits a batch of dispatches and awaits the queue once; the figure is the median of a
// few batches, the contestants taking turns batch by batch. Prints ms per product, the ratio to the f32
// matmul and the weight bytes each reads; every result is checked against the f32 matmul's.

import { createStorage, readFloat32, uploadStorage } from '../src/gpu/runtime/buffers';
import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { encodeLaunches, releaseLaunches, type Launch } from '../src/gpu/runtime/kernel';
import { createLinear } from '../src/gpu/kernels/linear/linear';
import { decodeWeights, encodeWeights } from '../src/gpu/kernels/weight-format/weight-format';
import { createMatmul } from '../src/gpu/kernels/matmul/matmul';
import { createRng } from '../src/util/prng';

const M = Number(process.argv[2] ?? 256);
const SHAPES = [
  { name: 'SmolLM2-135M q_proj', K: 576, N: 576 },
  { name: 'SmolLM2-135M gate_proj', K: 576, N: 1536 },
  { name: 'Qwen3-0.6B q_proj', K: 1024, N: 2048 },
  { name: 'Qwen3-0.6B gate_proj', K: 1024, N: 3072 },
];
const DTYPES = ['BF16', 'F16', 'F32'] as const;
const BATCH = 2;
const RUNS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const gpu = await createGpu();
const { device } = gpu;
console.log(`adapter: ${adapterLine(gpu.info)}; ${M} rows`);
const rng = createRng(1);
for (const { name, K, N } of SHAPES) {
  const raw = Array.from({ length: N * K }, () => (rng.next() * 2 - 1) * 0.05);
  const x = uploadStorage(
    device,
    'bench.x',
    Float32Array.from({ length: M * K }, () => rng.normal()),
  );
  const contestants: { label: string; launch: Launch; y: GPUBuffer; bytes: number }[] = [];
  // GPT-2's matmul reads the BF16-rounded weights as f32, so every contestant computes the same product
  // (F16 rounds the smallest of them once more: its max diff).
  const rounded = Float32Array.from(decodeWeights('BF16', encodeWeights('BF16', raw)));
  const w32 = uploadStorage(device, 'bench.w32', rounded);
  const yRef = createStorage(device, 'bench.yRef', M * N * 4);
  contestants.push({ label: 'matmul f32', launch: createMatmul(device, { M, K, N }, { x, w: w32, y: yRef }, { transB: true }), y: yRef, bytes: N * K * 4 });
  for (const dtype of DTYPES) {
    const bytes = encodeWeights(dtype, rounded);
    const w = createStorage(device, `bench.w${dtype}`, bytes.byteLength);
    device.queue.writeBuffer(w, 0, bytes);
    const y = createStorage(device, `bench.y${dtype}`, M * N * 4);
    contestants.push({ label: `linear ${dtype}`, launch: createLinear(device, { M, K, N }, dtype, { x, w, y }), y, bytes: bytes.byteLength });
  }
  const times = contestants.map(() => [] as number[]);
  for (let run = -1; run < RUNS; run++) {
    for (const [i, c] of contestants.entries()) {
      const t0 = performance.now();
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (let b = 0; b < BATCH; b++) encodeLaunches(pass, [c.launch]);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
      if (run >= 0) times[i].push((performance.now() - t0) / BATCH);
    }
  }
  const reference = await readFloat32(device, yRef, M * N);
  console.log(`\n${name}: (${M}, ${K}) · (${N}, ${K})ᵀ`);
  for (const [i, c] of contestants.entries()) {
    const out = await readFloat32(device, c.y, M * N);
    let diff = 0;
    for (let j = 0; j < out.length; j++) diff = Math.max(diff, Math.abs(out[j] - reference[j]));
    const ms = median(times[i]);
    console.log(
      `  ${c.label.padEnd(12)} ${ms.toFixed(1).padStart(8)} ms  ${(median(times[0]) / ms).toFixed(2)}x of matmul f32  weights ${(c.bytes / 2 ** 20).toFixed(2)} MiB  max diff ${diff.toExponential(1)}`,
    );
    releaseLaunches([c.launch]);
  }
}
gpu.destroy();
