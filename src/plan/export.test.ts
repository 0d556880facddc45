// The batch file of `mw export` read back: the worked example's packed batch row by row, binning
// under --max-tokens, SDCC's pairs, and (on generated rollouts with edits) every exported target
// seeing exactly its method's prefix through the subtree_end rule.

import { describe, expect, it } from 'vitest';
import { readInt32Tensor, readSafetensorsHeader, readTensor } from '../util/safetensors';
import { generateRandomRollout } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { workedExample } from '../testing/fixtures';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import { BATCH_FORMAT, exportBatch, IGNORE_INDEX } from './export';
import { METHODS, type Method } from './types';

type Batch = { metadata: Record<string, string>; int: Record<string, number[]>; float: Record<string, number[]> };

function read(bytes: Uint8Array): Batch {
  const header = readSafetensorsHeader(bytes);
  const batch: Batch = { metadata: header.metadata!, int: {}, float: {} };
  for (const entry of header.entries.values()) {
    if (entry.dtype === 'I32') batch.int[entry.name] = Array.from(readInt32Tensor(bytes, entry));
    else batch.float[entry.name] = Array.from(readTensor(bytes, entry));
  }
  return batch;
}

const worked = deriveTree(workedExample());
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

/** Physical ids a query row sees before itself: keys k < q in its packed sequence with q < subtree_end[k]. */
function seenBefore(b: Batch, q: number): number[] {
  const starts = b.int.seq_start;
  let s = 0;
  while (starts[s + 1] <= q) s++;
  const out: number[] = [];
  for (let k = starts[s]; k <= q; k++) if (b.int.subtree_end[k] > q) out.push(b.int.physical_ids[k]);
  return out;
}

describe('mw export batch: the worked example', () => {
  it('packed-4d: 21 rows in one packed sequence, tree subtree_end, depth positions, labels at predictor rows', () => {
    const { bytes, summary } = exportBatch([worked], { method: 'packed-4d' });
    const b = read(bytes);
    expect(b.metadata).toMatchObject({
      format: BATCH_FORMAT,
      method: 'packed-4d',
      vocab: '272',
      tokenizer: 'byte',
      rows: '21',
      sequences: '1',
      targets: '8',
      label_collisions: '0',
      rollout_ids: '["worked-example"]',
    });
    expect(summary).toMatchObject({ rows: 21, sequences: 1, targets: 8, rollouts: 1, labelCollisions: 0 });
    expect(b.int.seq_start).toEqual([0, 21]);
    expect(b.int.physical_ids).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16]);
    expect(b.int.position_ids).toEqual([...range(0, 9), ...range(2, 10), ...range(4, 8)]);
    // The trie: 0,1 shared; branch 0's rows 2..8 end at 9; branch 1 hangs below row 1 and holds rows 9..16; branch 2 (9,10 shared) rows 17..20.
    expect(b.int.subtree_end).toEqual([21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21]);
    expect(b.int.input_ids).toEqual([10, 11, 20, 21, 30, 31, 32, 22, 23, 40, 41, 22, 23, 33, 34, 24, 25, 24, 25, 26, 27]);
    // Targets 2,3 (rows 2,3) predicted by rows 1,2; 7,8 by 6,7; 13,14 (rows 15,16) by 14,15; 15,16 (rows 19,20) by 18,19.
    const labelled = b.int.labels.flatMap((v, i) => (v === IGNORE_INDEX ? [] : [[i, v, b.int.label_physical_ids[i]]]));
    expect(labelled).toEqual([
      [1, 20, 2],
      [2, 21, 3],
      [6, 22, 7],
      [7, 23, 8],
      [14, 24, 13],
      [15, 25, 14],
      [18, 26, 15],
      [19, 27, 16],
    ]);
    expect(b.float.rollout_logprobs.filter((v) => !Number.isNaN(v))).toEqual([-1.5, -0.5, -0.25, -2, -0.75, -1, -0.5, -0.125]);
    expect(b.int.target_rows).toEqual([1, 2, 6, 7, 14, 15, 18, 19]);
    expect(b.int.target_physical_ids).toEqual([2, 3, 7, 8, 13, 14, 15, 16]);
    expect(b.float.rollout_rewards).toEqual([1]);
    expect(b.int.rollout_groups).toEqual([-1]);
    expect(b.int.sdcc_student_rows).toBeUndefined();
  });

  it('logit-tree under --max-tokens 20: branches 0 and 1 share the first packed sequence (9 + 10 rows), branch 2 opens the second', () => {
    const b = read(exportBatch([worked], { method: 'logit-tree', maxTokens: 20 }).bytes);
    expect(b.int.seq_start).toEqual([0, 19, 27]);
    expect(b.metadata.max_tokens).toBe('20');
    // Causal blocks: each branch's rows end where the branch does, inside its packed sequence.
    expect(b.int.subtree_end).toEqual([...Array(9).fill(9), ...Array(10).fill(19), ...Array(8).fill(27)]);
    expect(b.int.position_ids).toEqual([...range(0, 9), ...range(0, 10), ...range(0, 8)]);
    expect(seenBefore(b, b.int.target_rows[4])).toEqual([0, 1, 9, 10, 7, 8, 11, 12]); // target 13: its live prefix
  });

  it('refuses a sequence longer than --max-tokens, naming the rollout', () => {
    expect(() => exportBatch([worked], { method: 'packed-4d', maxTokens: 20 })).toThrow(
      'worked-example.json: rollout "worked-example": a packed-4d sequence of 21 rows does not fit --max-tokens 20',
    );
  });

  it('sdcc: the union tree (final walk first, then the teacher rows), task labels on the student, one KL pair per diverging leaf', () => {
    const b = read(exportBatch([worked], { method: 'sdcc' }).bytes);
    expect(b.metadata).toMatchObject({ method: 'sdcc', rows: '14', targets: '4', pairs: '2' });
    expect(b.int.physical_ids).toEqual([0, 1, 9, 10, 13, 14, 15, 16, 7, 8, 11, 12, 13, 14]);
    expect(b.int.target_physical_ids).toEqual([13, 14, 15, 16]);
    expect(b.int.target_rows).toEqual([3, 4, 5, 6]);
    expect(b.int.sdcc_student_rows).toEqual([3, 4]);
    expect(b.int.sdcc_teacher_rows).toEqual([11, 12]);
    expect(seenBefore(b, 3)).toEqual([0, 1, 9, 10]); // 13's final prefix
    expect(seenBefore(b, 11)).toEqual([0, 1, 9, 10, 7, 8, 11, 12]); // 13's live prefix
  });
});

describe('mw export batch: generated rollouts with edits', () => {
  const trees: ConditioningTree[] = range(0, 12).map((seed) =>
    deriveTree(validateRollout(generateRandomRollout({ seed: 900 + seed, size: 'small', id: `g${seed}` }), { file: 'gen' })),
  );

  const prefixOf: Record<Exclude<Method, 'sdcc'>, (t: ConditioningTree, id: number) => ArrayLike<number> | null> = {
    'naive-compressed': (t, id) => t.finalPrefix(id),
    'naive-full': (t, id) => t.fullPrefix(id),
    'logit-tree': (t, id) => t.livePrefix(id),
    'packed-4d': (t, id) => t.livePrefix(id),
  };

  it.each(METHODS.filter((m) => m !== 'sdcc'))('%s: every target row sees exactly its prefix, and the set bins under --max-tokens 128', (method) => {
    const b = read(exportBatch(trees, { method: method as Exclude<Method, 'sdcc'>, maxTokens: 128 }).bytes);
    const starts = b.int.seq_start;
    expect(starts.length).toBeGreaterThan(3);
    for (let s = 0; s + 1 < starts.length; s++) expect(starts[s + 1] - starts[s]).toBeLessThanOrEqual(128);
    let checked = 0;
    b.int.target_rows.forEach((row, j) => {
      const tree = trees[b.int.rollout_index[row]];
      const id = b.int.target_physical_ids[j];
      const seen = seenBefore(b, row);
      // The predictor row sees the prefix and itself: the prefix's last id.
      expect(seen).toEqual(Array.from(prefixOf[method as Exclude<Method, 'sdcc'>](tree, id)!));
      expect(b.int.target_tokens[j]).toBe(tree.rollout.tokens[id]);
      expect(b.int.position_ids[row]).toBe(seen.length - 1);
      checked++;
    });
    expect(checked).toBeGreaterThan(50);
  });

  it('sdcc: student rows see the final prefix, teacher rows the live prefix, of every diverging leaf', () => {
    const b = read(exportBatch(trees, { method: 'sdcc' }).bytes);
    const P = b.int.sdcc_student_rows.length;
    expect(P).toBe(trees.reduce((n, t) => n + t.divergingLeaves.length, 0));
    expect(P).toBeGreaterThan(3);
    b.int.sdcc_student_rows.forEach((sRow, p) => {
      const tree = trees[b.int.rollout_index[sRow]];
      const j = b.int.target_rows.indexOf(sRow);
      const id = b.int.target_physical_ids[j];
      expect(tree.diverging[id]).toBe(1);
      expect(seenBefore(b, sRow)).toEqual(Array.from(tree.finalPrefix(id)!));
      expect(seenBefore(b, b.int.sdcc_teacher_rows[p])).toEqual(Array.from(tree.livePrefix(id)));
    });
  });
});

describe('mw export batch: a retried turn', () => {
  it('two targets predicted by one row: labels keep the first, target_* keep both, the collision is counted', () => {
    const rollout = validateRollout(
      {
        format: 'memorywalker.rollout/v1',
        id: 'retry',
        vocab: 16,
        events: [
          { op: 'append', role: 'prompt', tokens: [1, 2] },
          { op: 'append', role: 'act', tokens: [3, 4] },
          { op: 'edit', view: [{ keep: [0, 2] }] },
          { op: 'append', role: 'act', tokens: [5, 6] },
        ],
      },
      { file: 'retry.json' },
    );
    const b = read(exportBatch([deriveTree(rollout)], { method: 'packed-4d' }).bytes);
    expect(b.int.physical_ids).toEqual([0, 1, 2, 3, 4, 5]);
    expect(b.int.target_rows).toEqual([1, 2, 1, 4]);
    expect(b.int.target_tokens).toEqual([3, 4, 5, 6]);
    expect(b.int.labels).toEqual([IGNORE_INDEX, 3, 4, IGNORE_INDEX, 6, IGNORE_INDEX]);
    expect(b.metadata.label_collisions).toBe('1');
  });
});
