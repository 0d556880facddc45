// SDCC examined (issue 20): why on-policy RL from the demo checkpoint under `window` collapsed to EM 0
// in 6 updates at λ 0.1 (docs/experiments/demo). The demo model solves its task, so every GRPO group
// has equal rewards, every advantage is 0, and SDCC's KL is the only gradient. This runs that case
// at several λ on the run engine (one lane, the matrix's settings: 16 prompts × 2, constant lr 5e-4,
// fresh AdamW) beside the packed 4D mask as a control, and prints per update the size of the step
// ‖Δθ‖ and the KL, then the held-out greedy EM after the last update. AdamW normalises the gradient
// (and clips it to norm 1), so the steps come out the same size for every λ: λ cannot make them gentle.
//   npm run bench -- sdcc-collapse   [--updates=6] [--prompts=16] [--lambdas=0.01,0.1,0.3]

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createGpu } from '../src/gpu/runtime/device';
import { editorSpec } from '../src/harness/editors';
import { DEMO_TASK } from '../src/harness/env';
import { loadCheckpoint } from '../src/model/checkpoint';
import { packParameters } from '../src/model/params';
import type { Method } from '../src/plan/types';
import { createRunEngine, type RunSpec } from '../src/run/engine';

const arg = (name: string, fallback: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const UPDATES = Number(arg('updates', '6'));
const PROMPTS = Number(arg('prompts', '16'));
const LAMBDAS = arg('lambdas', '0.01,0.1,0.3').split(',').map(Number);
const LR = 5e-4;

const weights = loadCheckpoint(new Uint8Array(readFileSync('public/models/demo.safetensors')));
const gpu = await createGpu();
const norm = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] - b[i]) ** 2;
  return Math.sqrt(s);
};

console.log(
  `demo checkpoint, ${DEMO_TASK.env.id} under window (budget ${DEMO_TASK.budget}), RL ${PROMPTS} prompts × 2, constant lr ${LR}, ${UPDATES} updates; load ${loadavg()[0].toFixed(1)}`,
);
const runs: { name: string; method: Method; lambda?: number }[] = [
  { name: 'packed-4d (control)', method: 'packed-4d' },
  ...LAMBDAS.map((lambda) => ({ name: `sdcc λ ${lambda}`, method: 'sdcc' as Method, lambda })),
];
for (const run of runs) {
  const spec: RunSpec = {
    methods: [run.method],
    objective: 'rl',
    lambda: run.lambda,
    schedule: { peak: LR, warmup: 0, total: UPDATES, min: LR },
    conditioningDrift: false,
    source: {
      kind: 'played',
      play: { env: DEMO_TASK.env, editor: editorSpec('window', { budget: DEMO_TASK.budget }), prompts: PROMPTS, group: 2, seed: 0, maxActTokens: 24 },
      player: 'model',
      sampling: { temperature: 1 },
    },
    nothingToTrain: 'skip',
  };
  const engine = createRunEngine(gpu, spec, { weights });
  const start = packParameters(weights);
  let previous = start;
  const steps: string[] = [];
  for (let u = 1; u <= UPDATES; u++) {
    const [step] = await engine.next();
    const now = packParameters(await engine.lanes[0].trainer.readWeights());
    const m = step.metrics!;
    steps.push(
      `${u}: reward ${step.batch.played!.reward.toFixed(2)}, task ${m.taskLoss.toExponential(1)}, KL ${m.klSdcc.toFixed(2)}, |g| ${m.gradNorm.toExponential(2)}, ‖Δθ‖ ${norm(now, previous).toFixed(4)}`,
    );
    previous = now;
  }
  const heldOut = await engine.evaluate(run.method, 16);
  engine.destroy();
  console.log(`${run.name}: ‖θ − θ₀‖ ${norm(previous, start).toFixed(4)} after ${UPDATES} updates; held-out EM ${heldOut.em.toFixed(3)} (16 prompts, greedy)`);
  for (const s of steps) console.log(`  ${s}`);
}
gpu.destroy();
