// Playing one step's episodes: `prompts` prompts drawn from the run's seed and the step (stepSeed),
// `group` rollouts each, by a policy in the run's environment under its memory editor. Every
// episode is verified (its tree re-derives the views it was decoded from) and kept up to its last
// action. One function for `mw train --env`, `mw experiment` and the browser's runs.

import { generateDataset } from '../harness/dataset';
import type { EditorSpec } from '../harness/editors';
import type { EnvId, EnvSpec } from '../harness/env';
import { endAtLastAction } from '../harness/episode';
import type { Policy } from '../harness/policy';
import { verifyEpisode } from '../harness/verify';
import type { EventJson, RolloutJson } from '../rollout/format';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import { stepSeed } from './seeds';

export interface PlaySpec {
  env: EnvSpec | EnvId;
  editor: EditorSpec;
  /** Prompts per step, one group each. */
  prompts: number;
  /** Rollouts per prompt. */
  group: number;
  seed: number;
  /** Most tokens in one action. */
  maxActTokens: number;
  /** Most tokens of a live view and its action (default: the model's positions). */
  maxContext?: number;
}

export type PlayedBatch = Awaited<ReturnType<typeof playBatch>>;

/** What a watcher is shown of the episodes while they are played, and how it stops them. */
export interface EpisodeWatch {
  /** Called when an episode starts: its index in the batch and the rollout id it will have. */
  start?(index: number, total: number, id: string): void;
  /** Events so far of the running episode (a partial action last while one is being decoded). */
  change?(events: readonly EventJson[]): void;
  /** The finished rollout of the running episode. */
  done?(rollout: RolloutJson): void;
  /** True once the run asked to stop: the batch is abandoned between episodes (CancelledError). */
  cancelled?(): boolean;
}

/** Where a streaming policy reports the tokens of the action it is decoding: playBatch points it at the running episode. */
export interface TokenRelay {
  sink: ((token: number, logprob: number) => void) | null;
}

export interface Player {
  policy: Policy;
  relay?: TokenRelay;
}

/** `seed`, `prompts` and `group`, the held-out evaluation's: instead of stepSeed(spec.seed, step) and spec's. */
export interface PlayOptions extends Partial<Pick<PlaySpec, 'seed' | 'prompts' | 'group'>> {
  /** The model's positions: the default context limit. */
  nPositions: number;
  watch?: EpisodeWatch;
}

/** Plays step `step`'s episodes one after another with `player`. */
export async function playBatch(spec: PlaySpec, step: number, player: Player, options: PlayOptions) {
  const watch = options.watch ?? {};
  const relay = player.relay;
  const seed = options.seed ?? stepSeed(spec.seed, step);
  const started = performance.now();
  let partial: { op: 'append'; role: 'act'; tokens: number[]; logprobs: number[] } | null = null;
  let events: readonly EventJson[] = [];
  try {
    const dataset = await generateDataset(
      {
        env: spec.env,
        editor: spec.editor,
        n: options.prompts ?? spec.prompts,
        groupSize: options.group ?? spec.group,
        seed,
        idPrefix: `s${step}-`,
        episode: { maxActTokens: spec.maxActTokens, maxContext: spec.maxContext ?? options.nPositions, meta: { step } },
      },
      player.policy,
      {
        onStart(index, total, id) {
          events = [];
          partial = null;
          watch.start?.(index, total, id);
          if (relay && watch.change) {
            relay.sink = (token, logprob) => {
              partial ??= { op: 'append', role: 'act', tokens: [], logprobs: [] };
              partial.tokens.push(token);
              partial.logprobs.push(logprob);
              watch.change!([...events, partial]);
            };
          }
        },
        onEvent(_index, all) {
          events = all;
          partial = null;
          watch.change?.(all);
        },
        onRollout(result) {
          if (relay) relay.sink = null;
          verifyEpisode(result);
          watch.done?.(endAtLastAction(result.rollout));
        },
        cancelled: watch.cancelled,
      },
    );
    const json = dataset.rollouts.map(endAtLastAction);
    const rollouts = json.map((r) => validateRollout(r, { file: `${r.id}.json` }));
    // Each episode up to its last action, as played and as validated, and its tree; the prompts'
    // seed; generateDataset's figures of every episode as played, and the batch's mean reward and EM.
    return {
      json,
      rollouts,
      trees: rollouts.map(deriveTree),
      seed,
      summary: dataset.summary,
      reward: dataset.summary.meanReward,
      em: dataset.summary.em,
      genMs: performance.now() - started,
    };
  } finally {
    if (relay) relay.sink = null;
  }
}
