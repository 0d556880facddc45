// The two training batches of bench/train.ts (issue 6): v1 rollouts with exactly K edits each,
// deterministic from a seed. `early`: the edits rewrite the early context (compaction and sliding
// window alternate, branches share only the prompt); `late`: each edit folds the latest tool output
// (branches share long prefixes). Tapes of about 650 and 720 ids: within the default 1024 positions,
// small enough that a benchmark round of every method stays short on SwiftShader.

import { ROLLOUT_FORMAT, type EventJson, type RolloutJson, type ViewPieceJson } from '../src/rollout/format';
import { validateRollout } from '../src/rollout/validate';
import type { Rollout } from '../src/rollout/rollout';
import { createRng } from '../src/util/prng';

export type EditPlacement = 'early' | 'late';

/** Token counts of each batch's rollouts; see the file's opening comment for the edit shapes. */
export const BATCH_SHAPES = {
  /** Prompt (the sink every edit keeps), turns per segment, obs and act per turn, summary, window. */
  early: { prompt: 24, turnsPerSegment: 2, obs: 24, act: 8, summary: 12, window: 48 },
  /** Prompt (system + task), one tool call per segment: obs then act; the fold keeps `fold` tokens. */
  late: { prompt: 224, obs: 40, act: 12, fold: 4 },
} as const;

/**
 * One rollout of K edits, built as a live view of physical ids so the edits' keep ranges are exact.
 * early: edit k (odd) compacts: prompt + a summary of everything older + the latest turn; edit k (even)
 * slides a window: prompt + the last `window` live ids. late: edit k replaces obs of segment k - 1 (the
 * latest tool output, already acted on) by a `fold`-token summary, everything else kept.
 */
export function editRollout(placement: EditPlacement, seed: number, K = 8): RolloutJson {
  const rng = createRng(seed);
  const events: EventJson[] = [];
  let view: number[] = [];
  let nextId = 0;
  const randomTokens = (n: number) => Array.from({ length: n }, () => rng.int(256));
  const append = (role: 'prompt' | 'obs' | 'act', n: number): number[] => {
    const event: EventJson =
      role === 'act'
        ? { op: 'append', role, tokens: randomTokens(n), logprobs: Array.from({ length: n }, () => -rng.next() * 4) }
        : { op: 'append', role, tokens: randomTokens(n) };
    events.push(event);
    const ids = Array.from({ length: n }, () => nextId++);
    view.push(...ids);
    return ids;
  };
  /** The new live view from entries: a kept id, or an insert of `n` summary tokens. */
  const edit = (entries: (number | { insert: number })[]) => {
    const pieces: ViewPieceJson[] = [];
    const next: number[] = [];
    for (const e of entries) {
      if (typeof e === 'number') {
        const last = pieces[pieces.length - 1];
        if (last && 'keep' in last && last.keep[1] === e) last.keep[1]++;
        else pieces.push({ keep: [e, e + 1] });
        next.push(e);
      } else {
        pieces.push({ insert: { role: 'summary', tokens: randomTokens(e.insert) } });
        for (let i = 0; i < e.insert; i++) next.push(nextId++);
      }
    }
    events.push({ op: 'edit', view: pieces });
    view = next;
  };

  if (placement === 'early') {
    const s = BATCH_SHAPES.early;
    const prompt = append('prompt', s.prompt);
    let lastTurn: number[] = [];
    for (let k = 0; k <= K; k++) {
      if (k > 0) {
        const rest = view.slice(prompt.length);
        if (k % 2 === 1) edit([...prompt, { insert: s.summary }, ...lastTurn]);
        else edit([...prompt, ...rest.slice(rest.length - s.window)]);
      }
      for (let t = 0; t < s.turnsPerSegment; t++) lastTurn = [...append('obs', s.obs), ...append('act', s.act)];
    }
  } else {
    const s = BATCH_SHAPES.late;
    append('prompt', s.prompt);
    let obs: number[] = [];
    for (let k = 0; k <= K; k++) {
      if (k > 0) {
        const first = view.indexOf(obs[0]);
        edit([...view.slice(0, first), { insert: s.fold }, ...view.slice(first + obs.length)]);
      }
      obs = append('obs', s.obs);
      append('act', s.act);
    }
  }
  return {
    format: ROLLOUT_FORMAT,
    id: `${placement}-${seed}`,
    vocab: 272,
    tokenizer: 'byte',
    reward: seed % 2,
    meta: { generator: 'bench/_batches.ts', placement, K },
    events,
  };
}

/** `count` validated rollouts of one placement (seeds 1..count). */
export function editBatch(placement: EditPlacement, count: number, K = 8): Rollout[] {
  return Array.from({ length: count }, (_, i) => validateRollout(editRollout(placement, i + 1, K), { file: `${placement}-${i + 1}` }));
}
