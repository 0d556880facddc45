// Reference learning curves: the held-out EM of `mw experiment learning` (docs/experiments/learning/),
// mean and range over its seeds per method, for a browser run to draw as dashed curves beside its
// own. A run gets a phase's curves only when it trains as that phase did: the same start, task,
// editor, objective and optimiser settings (referencePhase). Pure data and one match rule.

import type { EditorKind } from '../harness/editors';
import type { Objective } from '../objectives/tokens';
import type { Method } from '../plan/types';
import { envSpecOf, type RunConfig } from './config';
import { formatEnvSpec } from '../harness/env';

/** Held-out EM at one update over the seeds: mean, lowest and highest. */
export interface ReferencePoint {
  update: number;
  mean: number;
  min: number;
  max: number;
}

export interface ReferenceCurve {
  method: Method;
  points: ReferencePoint[];
}

/** One phase of the experiment (an objective under an editor) and the settings a run must share to be compared with it. */
export interface ReferencePhase {
  objective: Objective;
  /** The starting checkpoint's file name (the app keeps checkpoints by name). */
  checkpoint: string;
  /** The task as `mw --env` writes it, e.g. collect:pages=3,decoys=1,filler=20. */
  env: string;
  editor: EditorKind;
  budget: number;
  lr: number;
  /** Prompts per update, and rollouts per prompt (RL's group; SFT plays one demonstration each). */
  prompts: number;
  group: number;
  /** SDCC's KL weight in this phase. */
  lambda: number;
  actTokens: number;
  evalEvery: number;
  evalPrompts: number;
  seeds: number[];
  curves: ReferenceCurve[];
}

export interface ReferenceCurves {
  format: 'memorywalker.reference-curves/v1';
  /** The command that produced them. */
  command: string;
  phases: ReferencePhase[];
}

/** The phase a run's settings reproduce (its held-out prompts aside), or null. */
export function referencePhase(config: RunConfig, reference: ReferenceCurves | null): ReferencePhase | null {
  if (!reference || !config.checkpoint) return null;
  const env = formatEnvSpec(envSpecOf(config));
  return (
    reference.phases.find(
      (p) =>
        p.checkpoint === config.checkpoint &&
        p.objective === config.objective &&
        p.env === env &&
        p.editor === config.editor &&
        (config.editor === 'none' || p.budget === config.budget) &&
        p.lr === config.lr &&
        p.prompts === config.batch &&
        (config.objective === 'sft' || p.group === config.group) &&
        p.actTokens === config.actTokens &&
        p.evalEvery === config.evalEvery,
    ) ?? null
  );
}

/** The curves of a phase a run draws: its own methods', SDCC's only at the phase's λ. */
export function referenceCurvesFor(config: RunConfig, phase: ReferencePhase | null): ReferenceCurve[] {
  if (!phase) return [];
  return phase.curves.filter((c) => config.methods.includes(c.method) && (c.method !== 'sdcc' || config.lambda === phase.lambda));
}
