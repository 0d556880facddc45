// Where a step's rollouts come from: `batch` prompts drawn from the run's seed and the step, each
// played by a policy in the run's environment under its memory editor. SFT plays the scripted
// expert (one demonstration per prompt, shared by every method); RL plays each method's own model
// (`group` rollouts per prompt). Deterministic in (config, step, policy weights).

import { createEditor, createEnv, endAtLastAction, promptSeeds, rolloutSeed, runEpisode, type Env, type Policy } from '../../../harness';
import type { EventJson, RolloutJson } from '../../../rollout/format';
import type { Rollout } from '../../../rollout/rollout';
import { validateRollout } from '../../../rollout/validate';
import { editorSpecOf, envSpecOf, type RunConfig } from './config';
import { observeEpisode, type LiveChange } from './liveEpisode';

export interface StepRollouts {
  json: RolloutJson[];
  rollouts: Rollout[];
  /** Mean reward and exact match of the batch. */
  reward: number;
  em: number;
  /** Mean number of edits per rollout. */
  K: number;
  genMs: number;
}

/** What the page is shown of an episode while it runs. */
export interface EpisodeWatch {
  /** Called when an episode starts: its index in the batch and the rollout id it will have. */
  start?(index: number, total: number, id: string): void;
  /** Events so far of the running episode. */
  change?(events: readonly EventJson[], change: LiveChange): void;
  /** The finished rollout of the running episode. */
  done?(rollout: RolloutJson): void;
  /** True once the run asked to stop: the batch is abandoned between episodes. */
  cancelled?(): boolean;
}

/** Where a streaming policy reports its tokens: playStep points it at the running episode. */
export interface TokenRelay {
  sink: ((token: number, logprob: number) => void) | null;
}

export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  constructor() {
    super('cancelled');
  }
}

/** The prompts of step `step`: distinct seeds, a function of the run seed and the step. */
export function stepPromptSeeds(config: RunConfig, step: number): number[] {
  return promptSeeds((Math.imul(config.seed ^ 0x5bd1e995, 2654435761) + Math.imul(step + 1, 0x9e3779b9)) >>> 0, config.batch);
}

/** The held-out prompts of evaluations: the same at every evaluation, none of them a training prompt's seed by design. */
export function evalPromptSeeds(config: RunConfig): number[] {
  return promptSeeds((Math.imul(config.seed ^ 0x27d4eb2f, 2246822519) ^ 0xe7a1) >>> 0, config.batch);
}

export function runEnv(config: RunConfig): Env {
  return createEnv(envSpecOf(config));
}

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/**
 * Plays the step's episodes one after another with `policy`, `perPrompt` rollouts per prompt, and
 * validates them (each rollout's file name is its id, for error messages).
 */
export async function playStep(
  config: RunConfig,
  step: number,
  env: Env,
  player: { policy: Policy; relay?: TokenRelay },
  perPrompt: number,
  maxContext: number,
  watch: EpisodeWatch = {},
  seeds: readonly number[] = stepPromptSeeds(config, step),
): Promise<StepRollouts> {
  const { policy, relay } = player;
  const started = now();
  const editor = createEditor(editorSpecOf(config));
  const json: RolloutJson[] = [];
  const total = seeds.length * perPrompt;
  for (const promptSeed of seeds) {
    for (let j = 0; j < perPrompt; j++) {
      if (watch.cancelled?.()) throw new CancelledError();
      const group = `${env.id}-p${promptSeed}`;
      const id = `s${step}-${group}-r${j}`;
      watch.start?.(json.length, total, id);
      const live = observeEpisode(editor, policy, (events, change) => watch.change?.(events, change));
      if (relay) relay.sink = live.token;
      try {
        const result = await runEpisode(env, live.editor, live.policy, promptSeed, {
          policySeed: rolloutSeed(promptSeed, j),
          id,
          group,
          maxActTokens: config.actTokens,
          maxContext,
          meta: { step },
        });
        const rollout = endAtLastAction(result.rollout);
        json.push(rollout);
        watch.done?.(rollout);
      } finally {
        if (relay) relay.sink = null;
      }
    }
  }
  const rollouts = json.map((r) => validateRollout(r, { file: `${r.id}.json` }));
  const mean = (f: (r: RolloutJson) => number) => json.reduce((s, r) => s + f(r), 0) / json.length;
  const meta = (r: RolloutJson) => (r.meta ?? {}) as { em?: number; K?: number };
  return {
    json,
    rollouts,
    reward: mean((r) => r.reward ?? 0),
    em: mean((r) => meta(r).em ?? 0),
    K: rollouts.reduce((s, r) => s + r.K, 0) / rollouts.length,
    genMs: now() - started,
  };
}
