// The rollout that froze the page (issue 31): a prompt of `edits` tokens, then `edits` edits, each
// evicting one more of them and followed by one act token. Every branch shares only its first token
// with the others, so N_packed is edits² (2,000 edits: N_packed 4,000,000, from a file of 211 KB).

/** The rollout as a JSON document (memorywalker.rollout/v1). */
export function evictingRollout(edits: number, id = 'evict'): string {
  const events: unknown[] = [{ op: 'append', role: 'prompt', tokens: Array.from({ length: edits }, (_, i) => 97 + (i % 26)) }];
  let L = edits;
  // Edit k keeps id 0 and ids k + 2 .. L - 1: the live view before it is id 0, then ids k + 1 .. L - 1 in a row.
  for (let k = 0; k < edits; k++) {
    events.push({ op: 'edit', view: [{ keep: [0, 1] }, { keep: [k + 2, L] }] });
    events.push({ op: 'append', role: 'act', tokens: [98] });
    L += 1;
  }
  return JSON.stringify({ format: 'memorywalker.rollout/v1', id, vocab: 272, events });
}
