// The learning experiment (issue 20): from a weak start, every replay method trained side by side
// under a memory editor that deletes and one that summarises, several seeds, (1) SFT on the scripted
// expert's demonstrations and (2) on-policy RL (PPO-clipped, GRPO), with held-out greedy EM every
// few updates; and SDCC's λ swept on the RL runs. This file: its settings, results and summaries as
// plain data; learning-run.ts runs it on the run engine, learning-report.ts writes table.md and SVGs.

import type { EditorKind, EditorSpec } from '../harness/editors';
import { formatEnvSpec, type EnvSpec } from '../harness/env';
import type { MismatchFigures } from '../metrics/mismatch';
import type { ModelConfig } from '../model/config';
import type { Objective } from '../objectives/tokens';
import type { SdccGate } from '../objectives/sdcc';
import type { Method } from '../plan/types';
import type { RunConfig } from '../run/config';
import type { MetricRecord } from '../run/engine';
import type { ReferenceCurves, ReferencePhase, ReferencePoint } from '../run/reference';
import { finite, mean } from './matrix';

export interface PhaseSizes {
  /** Updates per run. */
  updates: number;
  /** Prompts per update (SFT: one demonstration each; RL: one group each). */
  prompts: number;
  /** Rollouts per prompt (RL's GRPO group; 1 for SFT). */
  group: number;
  /** Peak learning rate: the browser's schedule (runSchedule: warm-up, cosine to a tenth). */
  lr: number;
  /** Updates between held-out evaluations (and after the last). */
  evalEvery: number;
}

export interface LearningConfig {
  /** The start's file name, as the app keeps it (the reference curves match on it). */
  checkpoint: string;
  env: EnvSpec;
  editors: readonly EditorSpec[];
  methods: readonly Method[];
  seeds: readonly number[];
  /** SDCC's λ in the SFT and RL phases (the paper's form: λ · mean KL over diverging leaves). */
  lambda: number;
  /** SDCC's λ values on the RL runs: the sweep (λ = `lambda` is the RL phase's own SDCC run). */
  sweep: readonly number[];
  /** λ values of the advantage-gated SDCC (src/objectives/sdcc.ts) on the RL runs, beside the paper's form. */
  gated: readonly number[];
  maxActTokens: number;
  sft: PhaseSizes;
  rl: PhaseSizes;
  /** Before the first update and every `evalEvery` of a phase, each model plays `prompts` held-out prompts greedily under the editor. */
  eval: { prompts: number };
}

export type Phase = 'sft' | 'rl' | 'sweep';

/** One update of one run, as results.json keeps it. */
export interface UpdateRecord {
  update: number;
  loss: number;
  taskLoss: number;
  klSdcc: number;
  klFired: boolean;
  divergingLeaves: number;
  /** Against the rollouts' own logprobs (RL; null for demonstrations). */
  logdiff: number | null;
  mu: number | null;
  /** Against the exact live-prefix score. */
  conditioningDrift: number | null;
  rollout_corr: MismatchFigures | null;
  /** The batch the update trained on (RL: sampled by the model; SFT: the expert, always 1). */
  reward: number;
  gradNorm: number;
  stepMs: number;
  genMs: number;
  skipped: number;
}

/** Greedy play on the held-out prompts after `update` updates (0: the start). */
export interface EvalPoint {
  update: number;
  em: number;
  reward: number;
}

export interface RunResult {
  phase: Phase;
  editor: EditorKind;
  seed: number;
  method: Method;
  /** SDCC's λ and which leaves its KL takes (null for the other methods). */
  lambda: number | null;
  gate: SdccGate | null;
  updates: UpdateRecord[];
  evals: EvalPoint[];
  /** Why the run stopped before its last update (a non-finite step), or null. */
  stopped: string | null;
  seconds: number;
}

export interface LearningResults {
  format: 'memorywalker.experiment-learning/v1';
  model: ModelConfig;
  config: LearningConfig;
  /** The start's held-out EM per editor and seed (every run of that editor and seed begins there). */
  baseline: { editor: EditorKind; seed: number; em: number; reward: number }[];
  runs: RunResult[];
  seconds: number;
}

/** The browser's run config of one phase, editor and seed: the experiment trains exactly what the app's preset does. */
export function phaseRunConfig(
  config: LearningConfig,
  objective: Objective,
  editor: EditorSpec,
  seed: number,
  methods: readonly Method[],
  lambda: number,
): RunConfig {
  const sizes = objective === 'sft' ? config.sft : config.rl;
  const env = config.env;
  if (env.id !== 'collect' && env.id !== 'lookup') throw new Error('learning: unknown environment');
  const difficulty = env.id === 'collect' ? env.pages : env.hops;
  const distractors = env.id === 'collect' ? env.decoys : env.distractors;
  if (difficulty === undefined || distractors === undefined || env.filler === undefined)
    throw new Error('learning: the environment needs every knob set (difficulty, distractors, filler)');
  return {
    preset: 'small',
    checkpoint: config.checkpoint,
    env: env.id,
    difficulty,
    distractors,
    filler: env.filler,
    editor: editor.kind,
    budget: editor.kind === 'none' ? 100 : editor.budget,
    actTokens: config.maxActTokens,
    methods: [...methods],
    lambda,
    objective,
    lr: sizes.lr,
    batch: sizes.prompts,
    group: objective === 'rl' ? sizes.group : 1,
    seed,
    steps: sizes.updates,
    checkpointEvery: sizes.updates,
    evalEvery: sizes.evalEvery,
    evalPrompts: config.eval.prompts,
  };
}

export function updateRecord(r: MetricRecord): UpdateRecord {
  return {
    update: r.step,
    loss: r.loss,
    taskLoss: r.taskLoss,
    klSdcc: r.klSdcc,
    klFired: r.klFired,
    divergingLeaves: r.divergingLeaves,
    logdiff: r.logdiff,
    mu: r.mu,
    conditioningDrift: r.conditioningDrift,
    rollout_corr: r.rollout_corr,
    reward: r.reward,
    gradNorm: r.gradNorm,
    stepMs: r.stepMs,
    genMs: r.genMs,
    skipped: r.skipped,
  };
}

export interface LearningJob {
  phase: Phase;
  method: Method;
  lambda: number;
  gate: SdccGate;
}

/** The runs of one seed and editor, in order: SFT, RL, then SDCC's RL runs at the sweep's other λ values and gated. */
export function learningJobs(config: LearningConfig): LearningJob[] {
  const jobs: LearningJob[] = [];
  for (const phase of ['sft', 'rl'] as const) for (const method of config.methods) jobs.push({ phase, method, lambda: config.lambda, gate: 'leaves' });
  if (!config.methods.includes('sdcc')) return jobs;
  for (const lambda of config.sweep) if (lambda !== config.lambda) jobs.push({ phase: 'sweep', method: 'sdcc', lambda, gate: 'leaves' });
  for (const lambda of config.gated) jobs.push({ phase: 'sweep', method: 'sdcc', lambda, gate: 'advantage' });
  return jobs;
}

/** Held-out evaluations of a run of `updates`: every `every`, and after the last. */
export function evaluations(updates: number, every: number): number {
  return Math.ceil(updates / every);
}

/** Units of work of the whole experiment: the start's evaluations, updates and evaluations (progress and ETA). */
export function learningUnits(config: LearningConfig): number {
  const perSeedEditor = learningJobs(config).reduce((n, j) => {
    const sizes = j.phase === 'sft' ? config.sft : config.rl;
    return n + sizes.updates + evaluations(sizes.updates, sizes.evalEvery);
  }, 1);
  return config.seeds.length * config.editors.length * perSeedEditor;
}

export function checkLearningConfig(config: LearningConfig): void {
  for (const [name, v] of [
    ['sft.updates', config.sft.updates],
    ['sft.prompts', config.sft.prompts],
    ['sft.evalEvery', config.sft.evalEvery],
    ['rl.updates', config.rl.updates],
    ['rl.prompts', config.rl.prompts],
    ['rl.evalEvery', config.rl.evalEvery],
    ['eval.prompts', config.eval.prompts],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`learning: ${name} must be an integer >= 1, got ${v}`);
  }
  if (!Number.isInteger(config.rl.group) || config.rl.group < 2)
    throw new Error(`learning: RL needs a group of at least 2 rollouts per prompt, got ${config.rl.group}`);
  if (!config.seeds.length || !config.editors.length || !config.methods.length) throw new Error('learning: at least one seed, editor and method');
}

// ---------------------------------------------------------------------------------------------
// Summaries over seeds.

/** A run's held-out EM curve with the start's EM as update 0. */
export function emCurve(results: LearningResults, run: RunResult): EvalPoint[] {
  const base = results.baseline.find((b) => b.editor === run.editor && b.seed === run.seed);
  return base ? [{ update: 0, em: base.em, reward: base.reward }, ...run.evals] : run.evals.slice();
}

/** Mean, lowest and highest held-out EM over runs at every update all of them evaluated. */
export function bandOf(curves: readonly EvalPoint[][]): ReferencePoint[] {
  if (!curves.length) return [];
  const updates = curves[0].map((p) => p.update).filter((u) => curves.every((c) => c.some((p) => p.update === u)));
  return updates.map((update) => {
    const ems = curves.map((c) => c.find((p) => p.update === update)!.em);
    return { update, mean: mean(ems)!, min: Math.min(...ems), max: Math.max(...ems) };
  });
}

/** What a group of runs (one method, phase, editor, λ; every seed) did, in numbers a table shows. */
export interface GroupSummary {
  phase: Phase;
  editor: EditorKind;
  method: Method;
  lambda: number | null;
  gate: SdccGate | null;
  seeds: number;
  band: ReferencePoint[];
  /** Held-out EM at the last evaluation: mean and range over seeds. */
  final: { mean: number; min: number; max: number } | null;
  /** Mean over seeds of the EM after the run minus the start's. */
  gain: number | null;
  /** Mean over updates and seeds. */
  loss: number | null;
  logdiff: number | null;
  mu: number | null;
  conditioningDrift: number | null;
  klSdcc: number | null;
  klFiredShare: number | null;
  k3: number | null;
  chi2Token: number | null;
  ess: number | null;
  reward: number | null;
  stepMs: number | null;
  stopped: number;
}

export function groupKey(run: Pick<RunResult, 'phase' | 'editor' | 'method' | 'lambda' | 'gate'>): string {
  return `${run.phase}/${run.editor}/${run.method}/${run.lambda ?? '-'}/${run.gate ?? '-'}`;
}

export function summarizeGroups(results: LearningResults): GroupSummary[] {
  const groups = new Map<string, RunResult[]>();
  for (const run of results.runs) {
    const key = groupKey(run);
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  return [...groups.values()].map((runs) => {
    const curves = runs.map((r) => emCurve(results, r));
    const band = bandOf(curves);
    const last = band.at(-1);
    const gains = curves.filter((c) => c.length >= 2).map((c) => c.at(-1)!.em - c[0].em);
    const all = runs.flatMap((r) => r.updates);
    const corr = all.map((u) => u.rollout_corr).filter((c): c is MismatchFigures => c !== null);
    const { phase, editor, method, lambda, gate } = runs[0];
    return {
      phase,
      editor,
      method,
      lambda,
      gate,
      seeds: runs.length,
      band,
      final: last && last.update > 0 ? { mean: last.mean, min: last.min, max: last.max } : null,
      gain: mean(gains),
      loss: mean(finite(all.map((u) => u.loss))),
      logdiff: mean(finite(all.map((u) => u.logdiff))),
      mu: mean(finite(all.map((u) => u.mu))),
      conditioningDrift: mean(finite(all.map((u) => u.conditioningDrift))),
      klSdcc: method === 'sdcc' ? mean(finite(all.map((u) => u.klSdcc))) : null,
      klFiredShare: method === 'sdcc' && all.length ? all.filter((u) => u.klFired).length / all.length : null,
      k3: mean(finite(corr.map((c) => c.k3_kl))),
      chi2Token: mean(finite(corr.map((c) => c.chi2_token))),
      ess: mean(finite(corr.map((c) => c.rollout_is_eff_sample_size))),
      reward: phase === 'sft' ? null : mean(finite(all.map((u) => u.reward))),
      stepMs: mean(finite(all.map((u) => u.stepMs))),
      stopped: runs.filter((r) => r.stopped !== null).length,
    };
  });
}

/** The reference curves the app draws beside a live run (src/run/reference.ts): the SFT and RL phases, every method at the phase's λ. */
export function referenceCurves(results: LearningResults, command: string): ReferenceCurves {
  const c = results.config;
  const summaries = summarizeGroups(results).filter((g) => g.phase !== 'sweep');
  const phases: ReferencePhase[] = [];
  for (const objective of ['sft', 'rl'] as const) {
    const sizes = objective === 'sft' ? c.sft : c.rl;
    for (const editor of c.editors) {
      const curves = summaries.filter((g) => g.phase === objective && g.editor === editor.kind).map((g) => ({ method: g.method, points: g.band }));
      if (!curves.length) continue;
      const run = phaseRunConfig(c, objective, editor, c.seeds[0], c.methods, c.lambda);
      phases.push({
        objective,
        checkpoint: c.checkpoint,
        env: formatEnvSpec(c.env),
        editor: editor.kind,
        budget: run.budget,
        lr: sizes.lr,
        prompts: sizes.prompts,
        group: run.group,
        lambda: c.lambda,
        actTokens: c.maxActTokens,
        evalEvery: sizes.evalEvery,
        evalPrompts: c.eval.prompts,
        // The seeds the phase's runs have (all of the config's, unless the experiment is partial).
        seeds: c.seeds.filter((seed) => results.runs.some((r) => r.phase === objective && r.editor === editor.kind && r.seed === seed)),
        curves,
      });
    }
  }
  return { format: 'memorywalker.reference-curves/v1', command, phases };
}
