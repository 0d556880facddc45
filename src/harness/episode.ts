// The rollout loop: environment, memory editor and policy produce one docs/rollout-format.md rollout. The harness
// keeps its own live view (ids and values), lets the editor rewrite it before each decode (or after
// a fold action), asks the policy for the next action on exactly that view, and records every
// decode's view so tests can check that the rollout re-derives to the contexts used in generation.

import type { EventJson, RolloutJson } from '../rollout/format';
import { ROLLOUT_FORMAT } from '../rollout/format';
import { editorBudget } from './editors';
import type { Editor } from './editors/types';
import type { Env, Outcome } from './env/types';
import { BYTE_FRAMING, type Framing } from './framing';
import { applyPlan, createBlock, createLiveView, viewIds, viewTokens, type EditPlan, type LiveView } from './live';
import type { Action, Policy, PolicySession } from './policy';

export interface EpisodeOptions {
  /** Seed of the policy's sampling (default: the episode seed). */
  policySeed?: number;
  /** Rollout id (default `<env>-<editor>-<seed>`). */
  id?: string;
  /** Group id for group-relative advantages (rollouts of one prompt). */
  group?: string;
  /** Actions allowed before the episode is cut off (default: the environment's). */
  maxTurns?: number;
  /** Most tokens one action may have (default 80). */
  maxActTokens?: number;
  /** Model context: the live view plus the action may not exceed it (default 1024). */
  maxContext?: number;
  /** Extra fields merged into the rollout's meta. */
  meta?: Record<string, unknown>;
  /** The tokens of the harness's pieces and the actions' stop tokens (default the byte tokenizer's); the rollout records its tokenizer. */
  framing?: Framing;
  /**
   * Called after every event the moment the harness records it, with the events so far (the
   * rollout's own array, which grows: copy what you keep). A watcher sees the rollout as it happens.
   */
  onEvent?(events: readonly EventJson[], event: EventJson): void;
}

export const EPISODE_DEFAULTS = { maxActTokens: 80, maxContext: 1024 } as const;

/**
 * How the episode ended: `done` (the environment ended it: an answer, or a final action),
 * `truncated` (an action reached its decode budget without a stop token), `context` (no room left
 * in the model context for another action) or `turns` (maxTurns actions without an end).
 */
export type EpisodeStop = 'done' | 'truncated' | 'context' | 'turns';

/** One decode step: the live view the policy was given and what it produced. */
export interface DecodeRecord {
  /** Decode index, from 0. */
  step: number;
  /**
   * Index (1..K) of the edit applied since the previous decode, or null: a budget editor's edit
   * right before this decode, or a fold applied after the previous action.
   */
  edit: number | null;
  /** Live-view length before that edit (the length a budget trigger saw); the view length otherwise. */
  lengthBefore: number;
  /** The live view given to the policy: physical ids and token values. */
  viewIds: number[];
  viewTokens: number[];
  /** The action's physical ids (its `act` append). */
  actIds: number[];
  actTokens: number[];
}

export type EpisodeResult = Awaited<ReturnType<typeof runEpisode>>;

function checkAction(action: Action, maxTokens: number, policy: string, framing: Framing): void {
  const { tokens, logprobs } = action;
  const fail = (why: string): never => {
    throw new Error(`policy ${policy}: ${why}`);
  };
  if (!Array.isArray(tokens) || tokens.length === 0) fail('an action needs at least one token');
  if (tokens.length > maxTokens) fail(`action has ${tokens.length} tokens, the budget was ${maxTokens}`);
  if (!Array.isArray(logprobs) || logprobs.length !== tokens.length) fail(`${logprobs?.length} logprobs for ${tokens.length} tokens`);
  tokens.forEach((t, i) => {
    if (!Number.isInteger(t) || t < 0 || t >= framing.vocab) fail(`token ${t} is not in [0, ${framing.vocab})`);
    if (i < tokens.length - 1 && isStop(framing, t)) fail(`stop token ${t} before the end of the action`);
  });
  logprobs.forEach((lp) => {
    if (!Number.isFinite(lp) || lp > 0) fail(`logprob ${lp} is not a finite number <= 0`);
  });
}

const isStop = (framing: Framing, t: number) => t === framing.newline || framing.eos.includes(t);

/**
 * Runs one episode. The environment is reset with `seed` (same seed, same prompt and world); the
 * policy samples with `opts.policySeed` (default `seed`). Same seeds and a deterministic policy give
 * the same rollout.
 */
export async function runEpisode(env: Env, editor: Editor, policy: Policy, seed: number, opts: EpisodeOptions = {}) {
  const maxTurns = opts.maxTurns ?? env.maxTurns;
  const maxActTokens = opts.maxActTokens ?? EPISODE_DEFAULTS.maxActTokens;
  const maxContext = opts.maxContext ?? EPISODE_DEFAULTS.maxContext;
  const policySeed = opts.policySeed ?? seed;
  const framing = opts.framing ?? BYTE_FRAMING;
  const episode = env.reset(seed);

  const events: EventJson[] = [];
  const record = (event: EventJson) => {
    events.push(event);
    opts.onEvent?.(events, event);
  };
  const decodes: DecodeRecord[] = [];
  let nextId = 0;
  let K = 0;
  /** The edit applied since the last decode, for the next decode record. */
  let lastEdit: { edit: number; lengthBefore: number } | null = null;

  let view: LiveView = createLiveView([]);
  const append = (role: 'prompt' | 'obs' | 'act', tokens: number[], notes: unknown[] = [], logprobs?: number[]) => {
    const block = createBlock(role, nextId, tokens, notes, framing.cue);
    view = createLiveView([...view.blocks, block]);
    nextId += tokens.length;
    record({ op: 'append', role, tokens, ...(logprobs && { logprobs }) });
    return block;
  };
  append('prompt', framing.prompt(episode.prompt));

  const session: PolicySession = await policy.start({ env: env.id, editor: editor.spec, seed: policySeed });
  const edit = async (plan: EditPlan) => {
    const lengthBefore = view.length;
    const applied = applyPlan(view, plan, nextId, framing.cue);
    view = applied.view;
    nextId = applied.nextId;
    record(applied.event);
    K++;
    await session.onEdit?.(viewTokens(view), applied.firstChanged);
    return { edit: K, lengthBefore };
  };

  let outcome: Outcome | null = null;
  let stop: EpisodeStop = 'turns';
  try {
    for (let step = 0; step < maxTurns && outcome === null; step++) {
      const plan = editor.beforeDecode(view, (notes) => episode.summarize(notes));
      if (plan) lastEdit = await edit(plan);
      const maxTokens = Math.min(maxActTokens, maxContext - view.length);
      if (maxTokens < 1) {
        stop = 'context';
        break;
      }

      const decode = {
        step,
        edit: lastEdit?.edit ?? null,
        lengthBefore: lastEdit?.lengthBefore ?? view.length,
        viewIds: viewIds(view),
        viewTokens: viewTokens(view),
      };
      lastEdit = null;
      const action = await session.act({ view: decode.viewTokens.slice(), maxTokens });
      checkAction(action, maxTokens, policy.name, framing);
      const tokens = action.tokens.slice();
      decodes.push({ ...decode, actIds: tokens.map((_, i) => nextId + i), actTokens: tokens });
      const act = append('act', tokens, [], action.logprobs.slice());

      const last = tokens[tokens.length - 1];
      if (!isStop(framing, last)) {
        stop = 'truncated';
        break;
      }
      if (last === framing.newline) {
        const claim = editor.onAct(view, act);
        if (claim && 'edit' in claim) {
          lastEdit = await edit(claim.edit);
          continue;
        }
        if (claim) {
          append('obs', framing.obs(claim.obs));
          continue;
        }
      }
      const result = episode.step(framing.decode(tokens.slice(0, -1)), last !== framing.newline);
      if (result.done) {
        outcome = result;
        stop = 'done';
      } else append('obs', framing.obs(result.text), result.note === undefined ? [] : [result.note]);
    }
  } finally {
    await session.close?.();
  }

  const final: Outcome = outcome ?? { done: true, answer: null, gold: episode.gold, em: 0, reward: 0 };
  const rollout: RolloutJson = {
    format: ROLLOUT_FORMAT,
    id: opts.id ?? `${env.id}-${editor.spec.kind}-${seed}`,
    vocab: framing.vocab,
    tokenizer: framing.tokenizer,
    reward: final.reward,
    ...(opts.group !== undefined ? { group: opts.group } : {}),
    meta: {
      env: env.id,
      editor: editor.spec.kind,
      budget: editorBudget(editor.spec),
      seed,
      em: final.em,
      policy: policy.name,
      policySeed,
      answer: final.answer,
      gold: final.gold,
      stop,
      turns: decodes.length,
      K,
      difficulty: { ...env.options },
      editorSpec: { ...editor.spec },
      ...opts.meta,
    },
    events,
  };
  return { rollout, decodes, outcome: final, stop, K };
}

/**
 * The rollout as trained: up to its last action. An episode cut off by its turn or context limit
 * ends with an observation (and possibly the edit made for a decode that never came); no target
 * conditions on them, and the final walk they lengthen could outgrow the model's positions.
 */
export function endAtLastAction(rollout: RolloutJson): RolloutJson {
  const end = rollout.events.findLastIndex((e) => e.op === 'append' && e.role === 'act') + 1;
  if (end === rollout.events.length) return rollout;
  return { ...rollout, events: rollout.events.slice(0, end), meta: { ...((rollout.meta ?? {}) as object), trimmedEvents: rollout.events.length - end } };
}
