// packBatch: several plan sequences (from one or many rollouts) in one flat buffer. Each block's
// `end[]` is shifted by its offset, so blocks never see each other (block-diagonal visibility).

import type { PlanSequence, PlanTarget } from './types';

export interface BatchTarget extends PlanTarget {
  /** Which input sequence the target came from. */
  sequence: number;
}

export interface PackedBatch extends PlanSequence {
  targets: BatchTarget[];
  /** Sequence s occupies indices offsets[s] .. offsets[s + 1] - 1. */
  offsets: Uint32Array;
}

export function packBatch(sequences: readonly PlanSequence[]): PackedBatch {
  const offsets = new Uint32Array(sequences.length + 1);
  sequences.forEach((s, i) => (offsets[i + 1] = offsets[i] + s.ids.length));
  const n = offsets[sequences.length];
  const ids = new Int32Array(n);
  const tokens = new Int32Array(n);
  const positions = new Int32Array(n);
  const end = new Uint32Array(n);
  const targets: BatchTarget[] = [];
  sequences.forEach((s, i) => {
    const o = offsets[i];
    ids.set(s.ids, o);
    tokens.set(s.tokens, o);
    positions.set(s.positions, o);
    for (let k = 0; k < s.end.length; k++) end[o + k] = s.end[k] + o;
    for (const t of s.targets) targets.push({ ...t, index: t.index + o, predictor: t.predictor + o, sequence: i });
  });
  return { ids, tokens, positions, end, targets, offsets };
}
