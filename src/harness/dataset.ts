// Data sets of rollouts from plain-data configs: n prompts, groupSize rollouts per prompt (one
// `group` each, for group-relative advantages), written as docs/rollout-format.md JSONL. No file system here: the
// CLI writes the text, the trainer and the browser worker take the objects.

import type { EventJson, RolloutJson } from '../rollout/format';
import { createRng } from '../util/prng';
import { createEditor, editorSpec, type EditorKind, type EditorSpec } from './editors';
import { createEnv, type EnvId, type EnvSpec } from './env';
import { runEpisode, type EpisodeOptions, type EpisodeResult } from './episode';
import type { Framing } from './framing';
import type { Policy } from './policy';

/** A data set as JSONL text, one rollout per line. */
export { stringifyRollouts as datasetToJsonl } from '../rollout/serialize';

export interface DatasetConfig {
  env: EnvSpec | EnvId;
  editor: EditorSpec | EditorKind;
  /** Replaces the editor's budget (not allowed for `none`). */
  budget?: number;
  /** Number of prompts (groups). */
  n: number;
  /** Rollouts per prompt (default 1). */
  groupSize?: number;
  seed: number;
  /** Turn, action and context limits for every episode, and fields for its meta. */
  episode?: Pick<EpisodeOptions, 'maxTurns' | 'maxActTokens' | 'maxContext' | 'meta'>;
  /** Put before every rollout id (a training run's `s<step>-`: ids stay distinct across its steps). */
  idPrefix?: string;
  /** Episodes in flight at once (default 1); a batching model policy can serve them together. */
  concurrency?: number;
  /** The tokens of the harness's pieces (default the byte tokenizer's): a model folder's chat template and tokenizer (hfFraming). */
  framing?: Framing;
}

export type Dataset = Awaited<ReturnType<typeof generateDataset>>;
export type DatasetSummary = ReturnType<typeof summarize>;

/** What a caller may watch of the episodes while they are played, and how it stops them. */
export interface DatasetHooks {
  /** After each episode (its index in the data set). */
  onRollout?(result: EpisodeResult, index: number): void;
  /** Before each episode: its index, the episodes in all and the rollout id it will have. */
  onStart?(index: number, total: number, id: string): void;
  /** Every event of episode `index` as it is recorded (runEpisode's onEvent). */
  onEvent?(index: number, events: readonly EventJson[], event: EventJson): void;
  /** Asked before each episode: true abandons the data set (CancelledError). */
  cancelled?(): boolean;
}

/** The data set was abandoned between episodes (DatasetHooks.cancelled). */
export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  constructor() {
    super('cancelled');
  }
}

/** Prompt seeds of a data set: distinct, drawn from the data set's seed. */
export function promptSeeds(seed: number, n: number): number[] {
  const rng = createRng(seed);
  const seen = new Set<number>();
  while (seen.size < n) seen.add(rng.nextU32());
  return [...seen];
}

/** The sampling seed of rollout j of the prompt with seed s. */
export function rolloutSeed(promptSeed: number, j: number): number {
  return (promptSeed ^ Math.imul(j + 1, 0x9e3779b9)) >>> 0;
}

export function tapeLength(rollout: RolloutJson): number {
  let n = 0;
  for (const e of rollout.events) {
    if (e.op === 'append') n += e.tokens?.length ?? 0;
    else for (const p of e.view) if ('insert' in p) n += p.insert.tokens?.length ?? 0;
  }
  return n;
}

export async function generateDataset(config: DatasetConfig, policy: Policy, hooks: DatasetHooks = {}) {
  const { n, seed } = config;
  const groupSize = config.groupSize ?? 1;
  const concurrency = config.concurrency ?? 1;
  for (const [name, v] of [
    ['n', n],
    ['groupSize', groupSize],
    ['concurrency', concurrency],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`generateDataset: ${name} must be an integer >= 1, got ${v}`);
  }
  const env = createEnv(config.env);
  const spec = typeof config.editor === 'string' ? editorSpec(config.editor) : config.editor;
  if (config.budget !== undefined && spec.kind === 'none') throw new Error('generateDataset: editor none has no budget');
  const { kind, ...options } = spec;
  const editor = createEditor(config.budget === undefined ? spec : editorSpec(kind, { ...options, budget: config.budget }), config.framing);

  const jobs = promptSeeds(seed, n).flatMap((promptSeed) => Array.from({ length: groupSize }, (_, j) => ({ promptSeed, j })));
  const rollouts: RolloutJson[] = new Array(jobs.length);
  // Decode records hold whole views: keep a few figures per episode, not the records.
  const figures: EpisodeFigures[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      if (hooks.cancelled?.()) throw new CancelledError();
      const index = next++;
      const { promptSeed, j } = jobs[index];
      const group = `${env.id}-p${promptSeed}`;
      const id = `${config.idPrefix ?? ''}${group}-${editor.spec.kind}-r${j}`;
      hooks.onStart?.(index, jobs.length, id);
      const onEvent = hooks.onEvent;
      const result = await runEpisode(env, editor, policy, promptSeed, {
        ...config.episode,
        framing: config.framing,
        policySeed: rolloutSeed(promptSeed, j),
        id,
        group,
        onEvent: onEvent && ((events, event) => onEvent(index, events, event)),
      });
      rollouts[index] = result.rollout;
      figures[index] = episodeFigures(result);
      hooks.onRollout?.(result, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  return { rollouts, summary: summarize(figures, n) };
}

type EpisodeFigures = ReturnType<typeof episodeFigures>;

function episodeFigures(r: EpisodeResult) {
  return {
    reward: r.outcome.reward,
    em: r.outcome.em,
    K: r.K,
    tokens: tapeLength(r.rollout),
    maxView: r.decodes.reduce((m, d) => Math.max(m, d.viewIds.length), 0),
    stop: r.stop,
  };
}

function summarize(figures: readonly EpisodeFigures[], groups: number) {
  const count = figures.length;
  const mean = (f: (r: EpisodeFigures) => number) => figures.reduce((s, r) => s + f(r), 0) / count;
  const max = (f: (r: EpisodeFigures) => number) => figures.reduce((m, r) => Math.max(m, f(r)), -Infinity);
  const stops: Record<string, number> = {};
  for (const r of figures) stops[r.stop] = (stops[r.stop] ?? 0) + 1;
  return {
    rollouts: count,
    groups,
    meanReward: mean((r) => r.reward),
    /** Share of rollouts with EM 1. */
    em: mean((r) => r.em),
    K: { mean: mean((r) => r.K), min: -max((r) => -r.K), max: max((r) => r.K) },
    /** Physical tape length L. */
    tokens: { mean: mean((r) => r.tokens), max: max((r) => r.tokens) },
    /** Longest live view given to the policy. */
    maxView: max((r) => r.maxView),
    stops,
  };
}
