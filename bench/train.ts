// Training-step cost of every replay method (issue 6) on two generated batches of K = 8 edits per
// rollout: `early` edits rewrite the early context (branches share little), `late` edits fold the
// latest tool output (branches share long prefixes). Default config, SFT, conditioningDrift off.
//   node --expose-gc --import ./scripts/register.mjs bench/train.ts [--rollouts=2] [--steps=3] [--profile]
// Rounds interleave batches and methods; each figure is the median of the timed steps after one
// warm-up step per method (pipeline compilation). Besides wall time it prints the process's CPU time
// (SwiftShader's worker threads included), which other load on this shared machine barely moves; the
// verdicts use it. --profile adds where a step's time goes (host work, attention, backward).

import { availableParallelism, loadavg } from 'node:os';
import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { createStorage } from '../src/gpu/runtime/buffers';
import { encodeLaunches } from '../src/gpu/runtime/kernel';
import { createForward } from '../src/gpu/model';
import { createTrainer } from '../src/gpu/train';
import { planStep, type StepOptions } from '../src/objectives/step';
import { assembleStep } from '../src/plan/step';
import { describeConfig, presetConfig } from '../src/model/config';
import { initWeights } from '../src/model/params';
import type { Rollout } from '../src/rollout/rollout';
import { deriveTree } from '../src/tree/derive';
import { editBatch, type EditPlacement } from './_batches';

const arg = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const ROLLOUTS = arg('rollouts', 2);
const STEPS = arg('steps', 3);
const PROFILE = process.argv.includes('--profile');

interface Variant {
  name: string;
  options: StepOptions;
}

const VARIANTS: Variant[] = [
  { name: 'naive-compressed', options: { method: 'naive-compressed', objective: 'sft', conditioningDrift: false } },
  { name: 'naive-full', options: { method: 'naive-full', objective: 'sft', conditioningDrift: false } },
  { name: 'logit-tree', options: { method: 'logit-tree', objective: 'sft', conditioningDrift: false } },
  { name: 'packed-4d', options: { method: 'packed-4d', objective: 'sft', conditioningDrift: false } },
  { name: 'sdcc', options: { method: 'sdcc', objective: 'sft', lambda: 0.1, conditioningDrift: false } },
  { name: 'sdcc (branch teachers)', options: { method: 'sdcc', objective: 'sft', lambda: 0.1, sdccTeacher: 'logit-tree', conditioningDrift: false } },
];

const gc = (globalThis as { gc?: () => void }).gc;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const cpuMs = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

/** Query-key pairs the attention visits by the visibility rule, Σ_k (end[k] − k): its work. */
const visiblePairs = (end: ArrayLike<number>) => {
  let n = 0;
  for (let k = 0; k < end.length; k++) n += end[k] - k;
  return n;
};

/** The same over a grouped batch: keys are seen only by queries of their own group. */
const groupedPairs = (end: ArrayLike<number>, group: ArrayLike<number>) => {
  let n = 0;
  for (let k = 0; k < end.length; k++) for (let i = k; i < end[k]; i++) if (group[i] === group[k]) n++;
  return n;
};

interface Measured {
  variant: Variant;
  tokens: number;
  pairs: number;
  targets: number;
  wall: number[];
  cpu: number[];
}

interface BatchCase {
  placement: EditPlacement;
  rollouts: Rollout[];
  figures: { K: number; L: number; nFinal: number; branchSum: number; nPacked: number; targets: number; dropped: number; diverging: number };
  measured: Measured[];
}

const gpu = await createGpu();
const config = presetConfig('default');
const trainer = createTrainer(gpu, initWeights(config, 1), { schedule: { peak: 1e-4, warmup: 0, total: 1000, min: 1e-5 } });

const cases: BatchCase[] = (['early', 'late'] as const).map((placement) => {
  const rollouts = editBatch(placement, ROLLOUTS);
  const trees = rollouts.map(deriveTree);
  const sum = (f: (t: (typeof trees)[number]) => number) => trees.reduce((n, t) => n + f(t), 0);
  const measured = VARIANTS.map((variant) => {
    const step = assembleStep(trees, variant.options);
    // SDCC's packed teacher rides in the student's forward (step.sdcc: student rows, then teacher-only rows).
    const trained = step.sdcc ?? step.batch;
    const tokens = trained.tokens.length + (step.teacher?.tokens.length ?? 0);
    const pairs =
      (step.sdcc ? groupedPairs(step.sdcc.end, step.sdcc.group) : visiblePairs(step.batch.end)) + (step.teacher ? visiblePairs(step.teacher.end) : 0);
    return { variant, tokens, pairs, targets: step.batch.targets.length, wall: [], cpu: [] };
  });
  return {
    placement,
    rollouts,
    figures: {
      K: trees[0].K,
      L: sum((t) => t.figures.physicalLength),
      nFinal: sum((t) => t.figures.finalWalkLength),
      branchSum: sum((t) => t.branches.reduce((n, _b, k) => n + t.branchIds(k).length, 0)),
      nPacked: sum((t) => t.figures.packedLength),
      targets: sum((t) => t.figures.targets),
      dropped: sum((t) => t.figures.droppedTargets),
      diverging: sum((t) => t.figures.divergingLeaves),
    },
    measured,
  };
});

const started = performance.now();
const cpuAtStart = process.cpuUsage();
console.log(`training-step bench on ${adapterLine(gpu.info)}; ${describeConfig(config)}`);
console.log(
  `${ROLLOUTS} rollouts per batch, SFT, conditioningDrift off; median of ${STEPS} interleaved steps after one warm-up step per method` +
    ` (load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)\n`,
);

// Warm-up: one step per method on a rollout of the same kind with K = 2 (compiles every pipeline;
// pipelines do not depend on the batch's shape).
for (const c of cases) for (const m of c.measured) await trainer.trainStep(planStep(editBatch(c.placement, 1, 2), m.variant.options));

for (let round = 0; round < STEPS; round++) {
  for (const c of cases) {
    for (const m of c.measured) {
      gc?.();
      const cpu = process.cpuUsage();
      const metrics = await trainer.trainStep(planStep(c.rollouts, m.variant.options));
      m.cpu.push(cpuMs(cpu));
      m.wall.push(metrics.stepMs);
      if (metrics.tokens !== m.tokens) throw new Error(`${m.variant.name}: the step ran ${metrics.tokens} rows, assembleStep gave ${m.tokens}`);
    }
  }
}

const fmt = (x: number, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const verdicts: string[] = [];
const verdict = (ok: boolean, text: string) => verdicts.push(`${ok ? 'PASS' : 'FAIL'}  ${text}`);

for (const c of cases) {
  const f = c.figures;
  const title =
    c.placement === 'early'
      ? 'early edits (compaction / sliding window: branches share little)'
      : 'late edits (fold the latest tool output: branches share long prefixes)';
  console.log(`== ${title}`);
  console.log(
    `K ${f.K} per rollout; N_final ${fmt(f.nFinal)}, L ${fmt(f.L)}, Σ branches ${fmt(f.branchSum)}, N_packed ${fmt(f.nPacked)} ` +
      `(N_packed / N_final ${fmt(f.nPacked / f.nFinal, 2)}); targets ${f.targets}, dropped ${f.dropped}, D ${f.diverging}`,
  );
  const plain = c.measured[0];
  const plainWall = median(plain.wall);
  const plainCpu = median(plain.cpu);
  const header = ['method', 'tokens', 'tok/N_final', 'attn pairs', 'targets', 'step ms', 'step/plain', 'cpu ms', 'cpu/plain', 'tokens/s', 'tokens/cpu-s'];
  const rows = c.measured.map((m) => {
    const wall = median(m.wall);
    const cpu = median(m.cpu);
    return [
      m.variant.name,
      fmt(m.tokens),
      fmt(m.tokens / f.nFinal, 2),
      fmt(m.pairs),
      fmt(m.targets),
      fmt(wall),
      fmt(wall / plainWall, 2),
      fmt(cpu),
      fmt(cpu / plainCpu, 2),
      fmt((m.tokens * 1000) / wall),
      fmt((m.tokens * 1000) / cpu),
    ];
  });
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
  console.log(`steps (wall ms): ${c.measured.map((m) => `${m.variant.name} ${m.wall.map((x) => fmt(x)).join('/')}`).join('; ')}\n`);

  // The expectations of issue 6, on CPU time (wall-clock ratios beside them, flagged where they disagree).
  const by = (name: string) => c.measured.find((m) => m.variant.name === name)!;
  const over = (a: Measured, b: Measured) => ({ cpu: median(a.cpu) / median(b.cpu), wall: median(a.wall) / median(b.wall) });
  const say = (r: { cpu: number; wall: number }, ok: (x: number) => boolean) =>
    `${fmt(r.cpu, 2)} (wall ${fmt(r.wall, 2)}${ok(r.wall) === ok(r.cpu) ? '' : ', disagrees'})`;
  const bound = 1.2 * (f.nPacked / f.nFinal);
  const withinBound = (x: number) => x <= bound;
  const packed = over(by('packed-4d'), plain);
  verdict(withinBound(packed.cpu), `${c.placement}: packed-4d / plain ${say(packed, withinBound)} ≤ 1.2 × N_packed / N_final = ${fmt(bound, 2)}`);
  const cheap = (x: number) => x <= 1.5;
  const s = over(by('sdcc'), plain);
  const branches = over(by('sdcc (branch teachers)'), plain);
  verdict(
    cheap(s.cpu),
    `${c.placement}: sdcc / plain ${say(s, cheap)} ≤ 1.5 (forward-only teacher rows ${fmt(by('sdcc').tokens - plain.tokens)} for D = ${f.diverging}: ` +
      `the packed teacher rides in the student's forward; with branch teachers ${fmt(branches.cpu, 2)}, ${fmt(by('sdcc (branch teachers)').tokens - plain.tokens)} rows)`,
  );
  if (c.placement === 'late') {
    const several = (x: number) => x >= 2;
    const r = over(by('logit-tree'), by('packed-4d'));
    verdict(
      several(r.cpu),
      `late: logit-tree / packed-4d ${say(r, several)} ≥ 2 ("several times faster"; tokens ${fmt(by('logit-tree').tokens / by('packed-4d').tokens, 2)}×)`,
    );
  }
  // "Time tracks tokens", for the methods that run forward and backward on every row (SDCC's teacher
  // rows are forward only): CPU time per row within 1.5× of the plain step's, either way.
  const perToken = c.measured.slice(0, 4).map((m) => ({ name: m.variant.name, x: median(m.cpu) / plainCpu / (m.tokens / plain.tokens) }));
  verdict(
    perToken.every((p) => p.x >= 1 / 1.5 && p.x <= 1.5),
    `${c.placement}: time tracks tokens: cpu per row / plain's within 1.5× (${perToken.map((p) => `${p.name} ${fmt(p.x, 2)}`).join(', ')})`,
  );
}

// What the time does track: rows (every matmul) and visible attention pairs. Least squares of
// cpu = a·rows + b·pairs over the methods that run forward and backward on every row, both batches.
{
  const points = cases.flatMap((c) =>
    c.measured.slice(0, 4).map((m) => ({ name: `${c.placement} ${m.variant.name}`, rows: m.tokens, pairs: m.pairs, cpu: median(m.cpu) })),
  );
  let [srr, srp, spp, src, spc] = [0, 0, 0, 0, 0];
  for (const p of points) {
    srr += p.rows * p.rows;
    srp += p.rows * p.pairs;
    spp += p.pairs * p.pairs;
    src += p.rows * p.cpu;
    spc += p.pairs * p.cpu;
  }
  const det = srr * spp - srp * srp;
  const a = (src * spp - spc * srp) / det;
  const b = (spc * srr - src * srp) / det;
  const share = (p: (typeof points)[number]) => (b * p.pairs) / (a * p.rows + b * p.pairs);
  console.log(
    `step cpu ≈ ${fmt(a, 3)} ms × rows + ${fmt(b * 1000, 2)} µs × attention pairs (least squares, forward + backward methods); measured / fit, attention's share of the fit:`,
  );
  console.log(`  ${points.map((p) => `${p.name} ${fmt(p.cpu / (a * p.rows + b * p.pairs), 2)} (${fmt(100 * share(p))} %)`).join(', ')}\n`);
}

console.log('expectations (issue 6), on CPU-time medians (wall-clock beside them):');
for (const v of verdicts) console.log(`  ${v}`);
const logitTreeOverPlain = (c: BatchCase, t: 'cpu' | 'wall') => fmt(median(c.measured[2][t]) / median(c.measured[0][t]), 2);
console.log(
  `  (paper: LogitTree 5–20× a plain step; logit-tree / plain here: ${cases.map((c) => `${c.placement} ${logitTreeOverPlain(c, 'cpu')} (wall ${logitTreeOverPlain(c, 'wall')})`).join(', ')})`,
);

if (PROFILE) {
  // Where one step's time goes: host work (derive + assemble, createForward, recording the
  // backward) against the GPU replay of the same forward (without and with attention) and backward.
  console.log('\nprofile (late batch; cpu ms, median of 2): host prep | createForward | record bwd | fwd w/o attention | fwd | fwd + bwd | step');
  const { device } = gpu;
  const c = cases[1];
  const replay = async (record: (pass: GPUComputePassEncoder) => void) => {
    const encoder = device.createCommandEncoder({ label: 'bench.encoder' });
    const pass = encoder.beginComputePass({ label: 'bench.pass' });
    record(pass);
    pass.end();
    const cpu = process.cpuUsage();
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
    return cpuMs(cpu);
  };
  for (const m of c.measured.slice(0, 4)) {
    const t: Record<string, number[]> = { prep: [], create: [], record: [], plain: [], fwd: [], fwdBwd: [] };
    for (let i = 0; i < 2; i++) {
      let cpu = process.cpuUsage();
      const step = assembleStep(c.rollouts.map(deriveTree), m.variant.options);
      t.prep.push(cpuMs(cpu));
      cpu = process.cpuUsage();
      const forward = createForward(trainer.model, step.batch);
      t.create.push(cpuMs(cpu));
      const dLogits = createStorage(device, 'bench.dLogits', forward.N * config.vocabSize * 4);
      cpu = process.cpuUsage();
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      forward.encodeBackward(pass, dLogits); // records the backward's launches (never submitted)
      pass.end();
      t.record.push(cpuMs(cpu));
      t.plain.push(await replay((p) => encodeLaunches(p, forward.launches)));
      t.fwd.push(await replay((p) => forward.encode(p)));
      t.fwdBwd.push(await replay((p) => (forward.encode(p), forward.encodeBackward(p, dLogits))));
      forward.destroy();
      dLogits.destroy();
    }
    console.log(
      `  ${m.variant.name.padEnd(18)} ${[t.prep, t.create, t.record, t.plain, t.fwd, t.fwdBwd, m.cpu].map((x) => fmt(median(x)).padStart(7)).join(' ')}`,
    );
  }
}

console.log(
  `\n(${fmt((performance.now() - started) / 1000, 1)} s, ${fmt(cpuMs(cpuAtStart) / 1000, 1)} s of CPU; load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores; SwiftShader times are not GPU times)`,
);
trainer.destroy();
gpu.destroy();
