// The scripted expert: reads the live view it is given (nothing else) and writes the environment
// solver's next action, so its rollouts are demonstrations for a supervised warm start. Under the
// `fold` editor it folds when the view is over the editor's budget and holds more turns than the
// editor keeps (and the fold fits the decode budget), writing the env's summary of the state it reads.
//
// With noise 0 (the default) it is deterministic: every token has probability 1 and logprob 0
// (log 1). With noise ε it slips: with probability ε the action is drawn uniformly from the
// environment's well-formed moves (and a fold, under the fold editor). The logprobs are then exact
// under that mixture: token k gets log P(action starts with tokens 0..k) / P(starts with 0..k-1),
// so they sum to the log-probability of the whole action (0 along the expert's action wherever no
// slip shares its prefix). Groups of noisy-expert rollouts have unequal rewards, as RL needs.

import { createRng } from '../../util/prng';
import { FOLD_PREFIX } from '../editors';
import type { Env, ExpertMove } from '../env/types';
import { actionTokens, readView, type ViewBlock } from '../framing';
import type { EpisodeInfo, Policy, PolicySession } from '../policy';

export interface ExpertOptions {
  /** Probability of a slip per action, in [0, 1]. */
  noise?: number;
}

/** Turns in the view: at a decode every action in it is followed by the harness's answer. */
function turnCount(view: readonly ViewBlock[]): number {
  return view.filter((b) => b.role === 'act').length;
}

function foldMove(env: Env, view: readonly ViewBlock[]): ExpertMove {
  return { text: FOLD_PREFIX + env.summarizeView(view), final: false };
}

/**
 * The expert's next move on a view: the env's solver, or a fold when the fold editor's budget says
 * so and the fold action fits in `maxTokens`.
 */
export function expertMove(env: Env, info: EpisodeInfo, view: readonly number[], maxTokens = Infinity): ExpertMove {
  const blocks = readView(view);
  const editor = info.editor;
  if (editor.kind === 'fold' && view.length > editor.budget && turnCount(blocks) > editor.keepTurns) {
    const fold = foldMove(env, blocks);
    if (actionTokens(fold.text, fold.final).length <= maxTokens) return fold;
  }
  return env.solve(blocks);
}

/**
 * Per-token logprobs of `chosen` under a distribution over token sequences, none a prefix of
 * another (every action ends with its stop token): log of the ratio of consecutive prefix masses.
 */
export function prefixLogprobs(chosen: readonly number[], candidates: readonly { tokens: readonly number[]; p: number }[]): number[] {
  const out: number[] = [];
  let alive = candidates.filter((c) => c.p > 0);
  let mass = alive.reduce((m, c) => m + c.p, 0);
  for (let k = 0; k < chosen.length; k++) {
    alive = alive.filter((c) => c.tokens[k] === chosen[k]);
    const next = alive.reduce((m, c) => m + c.p, 0);
    if (!(next > 0)) throw new Error('prefixLogprobs: the chosen action has probability 0');
    out.push(next === mass ? 0 : Math.log(next / mass));
    mass = next;
  }
  return out;
}

export function createExpertPolicy(env: Env, options: ExpertOptions = {}): Policy {
  const noise = options.noise ?? 0;
  if (!(noise >= 0 && noise <= 1)) throw new Error(`expert: noise must be in [0, 1], got ${noise}`);
  return {
    name: noise > 0 ? `expert(noise=${noise})` : 'expert',
    start(info: EpisodeInfo): PolicySession {
      if (info.env !== env.id) throw new Error(`expert for ${env.id} started on env ${info.env}`);
      const rng = createRng(info.seed);
      return {
        async act({ view, maxTokens }) {
          const best = expertMove(env, info, view, maxTokens);
          if (noise === 0) {
            const tokens = actionTokens(best.text, best.final).slice(0, maxTokens);
            return { tokens, logprobs: tokens.map(() => 0) };
          }
          const blocks = readView(view);
          const slips = env.moves(blocks);
          if (info.editor.kind === 'fold' && turnCount(blocks) > 0) slips.push(foldMove(env, blocks));
          const candidates = new Map<string, { tokens: number[]; p: number }>();
          const add = (move: ExpertMove, p: number) => {
            const tokens = actionTokens(move.text, move.final);
            const key = tokens.join(',');
            const c = candidates.get(key);
            if (c) c.p += p;
            else candidates.set(key, { tokens, p });
          };
          add(best, 1 - noise);
          for (const move of slips) add(move, noise / slips.length);
          const move = rng.next() < noise ? slips[rng.int(slips.length)] : best;
          const tokens = actionTokens(move.text, move.final);
          const logprobs = prefixLogprobs(tokens, [...candidates.values()]);
          return { tokens: tokens.slice(0, maxTokens), logprobs: logprobs.slice(0, maxTokens) };
        },
      };
    },
  };
}
