// Back to `memorywalker.rollout/v1` JSON: a validated Rollout as the object a file would hold
// (text pieces stay text, unknown top-level fields come back), and JSON / JSONL text.

import { ROLLOUT_FORMAT, type EventJson, type RolloutJson, type ViewPieceJson } from './format';
import type { Rollout } from './rollout';

function tokensOrText(rollout: Rollout, first: number, count: number, text: string | undefined) {
  return text !== undefined ? { text } : { tokens: Array.from(rollout.tokens.subarray(first, first + count)) };
}

export function rolloutToJson(rollout: Rollout): RolloutJson {
  const events: EventJson[] = rollout.events.map((event): EventJson => {
    if (event.op === 'append') {
      const out = { op: 'append', role: event.role, ...tokensOrText(rollout, event.first, event.count, event.text) } as EventJson;
      if (event.logprobs) (out as { logprobs?: number[] }).logprobs = event.logprobs.slice();
      return out;
    }
    const view = event.view.map((piece): ViewPieceJson => {
      if ('keep' in piece) return { keep: [piece.keep[0], piece.keep[1]] };
      const { role, first, count, text } = piece.insert;
      return { insert: { role, ...tokensOrText(rollout, first, count, text) } } as ViewPieceJson;
    });
    return { op: 'edit', view };
  });
  const header: Record<string, unknown> = { format: ROLLOUT_FORMAT, id: rollout.id, vocab: rollout.vocab };
  if (rollout.tokenizerGiven) header.tokenizer = rollout.tokenizer;
  if (rollout.reward !== undefined) header.reward = rollout.reward;
  if (rollout.group !== undefined) header.group = rollout.group;
  if (rollout.meta !== undefined) header.meta = rollout.meta;
  // Spread, not Object.assign: it defines own properties, so an unknown "__proto__" field comes back too.
  return { ...header, ...rollout.extra, events } as RolloutJson;
}

/** One rollout as one line of JSON (also a valid `.json` file). */
export function stringifyRollout(rollout: RolloutJson | Rollout): string {
  return JSON.stringify('format' in rollout ? rollout : rolloutToJson(rollout));
}

/** Several rollouts as JSONL text, one per line. */
export function stringifyRollouts(rollouts: readonly (RolloutJson | Rollout)[]): string {
  return rollouts.map(stringifyRollout).join('\n') + '\n';
}
