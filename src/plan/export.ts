// The batch `mw export` writes (docs/batch-format.md, `memorywalker.batch/v1`): a method's scoring
// plans for a set of rollouts, binned in stream order into packed sequences of at most N rows, as
// named columns a PyTorch trainer reads. Pure: one rollout at a time, its rows go straight to a sink.

import { ValidationError, quote } from '../rollout/errors';
import { writeSafetensors, type TensorSpec } from '../util/safetensors';
import type { ConditioningTree } from '../tree/types';
import { buildPlan, sdccUnion } from './build';
import type { Method, PlanSequence, PlanTarget } from './types';

export const BATCH_FORMAT = 'memorywalker.batch/v1';
/** `labels` where no target is predicted: PyTorch's cross-entropy ignore_index. */
export const IGNORE_INDEX = -100;

/** What a column's length counts: rows N, packed sequences B (+1), targets T, KL pairs P, rollouts R. */
type Extent = 'rows' | 'sequences+1' | 'targets' | 'pairs' | 'rollouts';

/** Every tensor of a batch file, in file order. The sdcc_* pair are written for method sdcc only. */
export const BATCH_TENSORS = [
  { name: 'input_ids', dtype: 'I32', extent: 'rows' },
  { name: 'position_ids', dtype: 'I32', extent: 'rows' },
  { name: 'seq_start', dtype: 'I32', extent: 'sequences+1' },
  { name: 'subtree_end', dtype: 'I32', extent: 'rows' },
  { name: 'physical_ids', dtype: 'I32', extent: 'rows' },
  { name: 'rollout_index', dtype: 'I32', extent: 'rows' },
  { name: 'labels', dtype: 'I32', extent: 'rows' },
  { name: 'label_physical_ids', dtype: 'I32', extent: 'rows' },
  { name: 'rollout_logprobs', dtype: 'F32', extent: 'rows' },
  { name: 'target_rows', dtype: 'I32', extent: 'targets' },
  { name: 'target_tokens', dtype: 'I32', extent: 'targets' },
  { name: 'target_physical_ids', dtype: 'I32', extent: 'targets' },
  { name: 'target_rollout_logprobs', dtype: 'F32', extent: 'targets' },
  { name: 'sdcc_student_rows', dtype: 'I32', extent: 'pairs' },
  { name: 'sdcc_teacher_rows', dtype: 'I32', extent: 'pairs' },
  { name: 'rollout_rewards', dtype: 'F32', extent: 'rollouts' },
  { name: 'rollout_groups', dtype: 'I32', extent: 'rollouts' },
] as const satisfies readonly { name: string; dtype: 'I32' | 'F32'; extent: Extent }[];

export type BatchTensorName = (typeof BATCH_TENSORS)[number]['name'];

const isSdccColumn = (name: BatchTensorName) => name.startsWith('sdcc_');

/** Receives each column's values in order; columns grow independently. */
export interface BatchSink {
  write(name: BatchTensorName, values: Int32Array | Float32Array): void;
}

export interface BatchOptions {
  method: Method;
  /** Most rows in one packed sequence; no limit (one packed sequence) when absent. */
  maxTokens?: number;
}

export interface BatchSummary {
  /** The header's tensors, in file order, sized. */
  tensors: TensorSpec[];
  metadata: Record<string, string>;
  rows: number;
  sequences: number;
  targets: number;
  pairs: number;
  rollouts: number;
  /** Targets whose predictor row already labels an earlier target (a retried turn's siblings): absent from `labels`, present in `target_*`. */
  labelCollisions: number;
}

/** One plan sequence as batch rows, indices local to it: the targets it labels and SDCC's KL pairs. */
export interface BatchSequence {
  plan: Pick<PlanSequence, 'ids' | 'tokens' | 'positions' | 'end'>;
  targets: readonly PlanTarget[];
  pairs: readonly { studentRow: number; teacherRow: number }[];
}

/**
 * A rollout's rows under `method`: the plan's sequences with their targets. SDCC is one sequence,
 * the union tree the training step runs (sdccUnion: rows 0..S-1 the final walk, the student, with
 * the naive-compressed targets; then the teacher rows); each diverging leaf pairs its student
 * predictor row with its teacher predictor row. Without diverging leaves it is the student alone.
 */
export function batchSequences(tree: ConditioningTree, method: Method): BatchSequence[] {
  if (method !== 'sdcc') return buildPlan(tree, method).sequences.map((plan) => ({ plan, targets: plan.targets, pairs: [] }));
  const { student, pairs } = buildPlan(tree, 'sdcc');
  const union = sdccUnion(tree);
  if (!union) return [{ plan: student, targets: student.targets, pairs: [] }];
  const studentRow = new Map(student.targets.map((t) => [t.id, t.predictor]));
  const teacherRow = new Map(union.tree.targets.map((t) => [t.id, t.predictor]));
  return [
    {
      plan: union.tree,
      targets: student.targets,
      pairs: pairs.map((p) => ({ studentRow: studentRow.get(p.id)!, teacherRow: teacherRow.get(p.id)! })),
    },
  ];
}

/**
 * Writes rollouts' rows to `sink` as they come (next-fit binning: a sequence that does not fit the
 * open packed sequence closes it), so memory holds one rollout, whatever the set's size; `finish`
 * sizes the header. `subtree_end` and every row index are global (over all N rows).
 */
export function createBatchWriter(options: BatchOptions, sink: BatchSink) {
  const { method } = options;
  const maxTokens = options.maxTokens ?? Infinity;
  let rows = 0;
  let binStart = 0;
  let sequences = 0;
  let targets = 0;
  let pairs = 0;
  let labelCollisions = 0;
  const rolloutIds: string[] = [];
  const groups = new Map<string, number>();
  let vocab = 0;
  let tokenizer: string | undefined;
  sink.write('seq_start', Int32Array.of(0));

  function addSequence(s: BatchSequence, rollout: number, where: () => string): void {
    const n = s.plan.ids.length;
    if (n === 0) return;
    if (n > maxTokens) throw new Error(`${where()}: a ${method} sequence of ${n} rows does not fit --max-tokens ${maxTokens}`);
    if (rows - binStart + n > maxTokens) {
      sink.write('seq_start', Int32Array.of(rows));
      sequences++;
      binStart = rows;
    }
    const o = rows;
    const end = new Int32Array(n);
    for (let i = 0; i < n; i++) end[i] = s.plan.end[i] + o;
    const labels = new Int32Array(n).fill(IGNORE_INDEX);
    const labelIds = new Int32Array(n).fill(-1);
    const logprobs = new Float32Array(n).fill(NaN);
    const T = s.targets.length;
    const tRows = new Int32Array(T);
    const tTokens = new Int32Array(T);
    const tIds = new Int32Array(T);
    const tLogprobs = new Float32Array(T);
    s.targets.forEach((t, j) => {
      const lp = t.rolloutLogprob ?? NaN;
      if (labelIds[t.predictor] >= 0) labelCollisions++;
      else {
        labels[t.predictor] = t.token;
        labelIds[t.predictor] = t.id;
        logprobs[t.predictor] = lp;
      }
      tRows[j] = t.predictor + o;
      tTokens[j] = t.token;
      tIds[j] = t.id;
      tLogprobs[j] = lp;
    });
    sink.write('input_ids', Int32Array.from(s.plan.tokens));
    sink.write('position_ids', Int32Array.from(s.plan.positions));
    sink.write('subtree_end', end);
    sink.write('physical_ids', Int32Array.from(s.plan.ids));
    sink.write('rollout_index', new Int32Array(n).fill(rollout));
    sink.write('labels', labels);
    sink.write('label_physical_ids', labelIds);
    sink.write('rollout_logprobs', logprobs);
    sink.write('target_rows', tRows);
    sink.write('target_tokens', tTokens);
    sink.write('target_physical_ids', tIds);
    sink.write('target_rollout_logprobs', tLogprobs);
    if (method === 'sdcc') {
      sink.write(
        'sdcc_student_rows',
        Int32Array.from(s.pairs, (p) => p.studentRow + o),
      );
      sink.write(
        'sdcc_teacher_rows',
        Int32Array.from(s.pairs, (p) => p.teacherRow + o),
      );
      pairs += s.pairs.length;
    }
    rows += n;
    targets += T;
  }

  return {
    /** Appends one rollout (its tree); throws a ValidationError naming it when it cannot go in. */
    add(tree: ConditioningTree): void {
      const { rollout } = tree;
      const r = rolloutIds.length;
      const where = () => `rollout ${quote(rollout.id)}`;
      if (tokenizer !== undefined && rollout.tokenizer !== tokenizer) {
        throw new ValidationError(
          rollout.source,
          `${where()}: tokenizer ${quote(rollout.tokenizer)}, the rollouts before it use ${quote(tokenizer)} (one batch, one tokenizer)`,
        );
      }
      tokenizer = rollout.tokenizer;
      vocab = Math.max(vocab, rollout.vocab);
      try {
        for (const s of batchSequences(tree, method)) addSequence(s, r, where);
      } catch (error) {
        throw error instanceof ValidationError ? error : new ValidationError(rollout.source, (error as Error).message);
      }
      rolloutIds.push(rollout.id);
      let group = -1;
      if (rollout.group !== undefined) {
        if (!groups.has(rollout.group)) groups.set(rollout.group, groups.size);
        group = groups.get(rollout.group)!;
      }
      sink.write('rollout_rewards', Float32Array.of(rollout.reward ?? NaN));
      sink.write('rollout_groups', Int32Array.of(group));
    },
    finish(): BatchSummary {
      if (rows > binStart) {
        sink.write('seq_start', Int32Array.of(rows));
        sequences++;
      }
      const R = rolloutIds.length;
      const extent: Record<Extent, number> = { rows, 'sequences+1': sequences + 1, targets, pairs, rollouts: R };
      const tensors = BATCH_TENSORS.filter((t) => method === 'sdcc' || !isSdccColumn(t.name)).map((t) => ({
        name: t.name,
        dtype: t.dtype,
        shape: [extent[t.extent]],
      }));
      const metadata: Record<string, string> = {
        format: BATCH_FORMAT,
        method,
        vocab: String(vocab),
        tokenizer: tokenizer ?? 'byte',
        max_tokens: Number.isFinite(maxTokens) ? String(maxTokens) : 'none',
        rows: String(rows),
        sequences: String(sequences),
        targets: String(targets),
        ...(method === 'sdcc' ? { pairs: String(pairs) } : {}),
        label_collisions: String(labelCollisions),
        rollout_ids: JSON.stringify(rolloutIds),
        groups: JSON.stringify([...groups.keys()]),
      };
      return { tensors, metadata, rows, sequences, targets, pairs, rollouts: R, labelCollisions };
    },
  };
}

/** The whole batch file in memory (tests, small sets); `mw export` streams the same bytes. */
export function exportBatch(trees: Iterable<ConditioningTree>, options: BatchOptions): { bytes: Uint8Array; summary: BatchSummary } {
  const columns = new Map<BatchTensorName, (Int32Array | Float32Array)[]>();
  const writer = createBatchWriter(options, {
    write(name, values) {
      const list = columns.get(name);
      if (list) list.push(values);
      else columns.set(name, [values]);
    },
  });
  for (const tree of trees) writer.add(tree);
  const summary = writer.finish();
  const bytes = writeSafetensors(
    summary.tensors.map(({ name, dtype, shape }) => {
      const parts = columns.get(name as BatchTensorName) ?? [];
      const data = dtype === 'I32' ? new Int32Array(shape[0]) : new Float32Array(shape[0]);
      let at = 0;
      for (const p of parts) {
        (data as Float32Array).set(p as Float32Array, at);
        at += p.length;
      }
      return { name, shape, data };
    }),
    summary.metadata,
  );
  return { bytes, summary };
}
