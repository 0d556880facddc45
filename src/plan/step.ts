// One training step's layout, pure CPU: the plans of a batch of rollouts under one method packed
// into the rows the model runs (docs/methods.md), SDCC's teacher rows and its KL pairs, and the
// forward-only batch that measures the conditioning drift. Each tree's plan is built once, in a
// PlanCache that the fit check (needs.ts) and the assembly share; src/objectives/step.ts adds the
// targets and pairs, and the GPU step (src/gpu/train.ts) runs the result.

import type { ConditioningTree } from '../tree/types';
import { packBatch, packSdccBatch, type PackedBatch, type SdccBatch } from './batch';
import { buildPlan } from './build';
import type { Method, Plan, PlanOptions, PlanSequence, SequencePlan } from './types';

/** Tree r's plan under `method`, built on first use and kept: the step's plans, each built once. */
export type PlanCache = (r: number, method: Method) => Plan;

export function planCache(trees: readonly ConditioningTree[], options: PlanOptions = {}): PlanCache {
  const built = trees.map(() => new Map<Method, Plan>());
  return (r, method) => {
    let plan = built[r].get(method);
    if (!plan) built[r].set(method, (plan = buildPlan(trees[r], method, { sdccTeacher: options.sdccTeacher })));
    return plan;
  };
}

export interface StepLayoutOptions extends PlanOptions {
  method: Method;
  /**
   * Also score every target under its exact live prefix (docs/metrics.md, conditioning drift):
   * free for the exact methods, the diverging leaves' teacher rows for SDCC, and for the others
   * a packed-4d batch of every rollout, forward only. Default true.
   */
  conditioningDrift?: boolean;
}

export interface StepLayout {
  /** The trained rows: every rollout's plan sequences (SDCC: its student), block-diagonal. */
  batch: PackedBatch;
  /** Rollout of each batch target. */
  targetRollout: number[];
  /** SDCC with branch teachers: the teachers' own batch, forward only. */
  teacher: PackedBatch | null;
  /**
   * SDCC with the packed teacher: the student batch followed by the teacher rows it does not
   * share, one grouped forward whose backward covers only the student's rows.
   */
  sdcc: SdccBatch | null;
  /** SDCC's diverging leaves: their rollout (index in the batch) and predictor rows in the student's and in the teacher's logits. */
  pairs: { rollout: number; studentRow: number; teacherRow: number }[];
  /** The live-prefix scoring batch of the conditioning drift (non-exact methods but SDCC), or null. */
  live: PackedBatch | null;
  /** Whether the step measures the conditioning drift (null figures when not). */
  measuresLive: boolean;
  /** The method is exact (EXACT_METHODS): its own scores are the live-prefix scores. */
  exact: boolean;
  nPacked: number;
  nFinal: number;
  divergingLeaves: number;
}

const EXACT_METHODS: readonly Method[] = ['logit-tree', 'packed-4d'];

/** Every tree's plan under `options.method` (from `plans`, tree r's at index r), packed into one step. */
export function assembleStep(trees: readonly ConditioningTree[], options: StepLayoutOptions, plans: PlanCache = planCache(trees, options)): StepLayout {
  const { method } = options;
  const sequences: PlanSequence[] = [];
  const sequenceRollout: number[] = [];
  const teachers: PlanSequence[] = [];
  const unions: ({ tree: PlanSequence; studentLength: number } | null)[] = [];
  const packedTeacher = options.sdccTeacher !== 'logit-tree';
  const pairsById: { rollout: number; id: number; teacher: number }[] = [];
  let nPacked = 0;
  let nFinal = 0;
  let divergingLeaves = 0;
  trees.forEach((tree, r) => {
    nPacked += tree.figures.packedLength;
    nFinal += tree.figures.finalWalkLength;
    divergingLeaves += tree.figures.divergingLeaves;
    if (method === 'sdcc') {
      const plan = plans(r, 'sdcc');
      if (plan.method !== 'sdcc') throw new Error('assembleStep: the plan cache gave no SDCC plan');
      sequences.push(plan.student);
      sequenceRollout.push(r);
      if (packedTeacher) {
        unions.push(plan.teachers.length ? { tree: plan.teachers[0], studentLength: plan.sharedRows } : null);
        for (const p of plan.pairs) pairsById.push({ rollout: r, id: p.id, teacher: sequences.length - 1 });
      } else {
        const base = teachers.length;
        teachers.push(...plan.teachers);
        for (const p of plan.pairs) pairsById.push({ rollout: r, id: p.id, teacher: base + p.teacher });
      }
    } else {
      const plan = plans(r, method);
      if (plan.method === 'sdcc') throw new Error(`assembleStep: the plan cache gave an SDCC plan for ${method}`);
      for (const s of plan.sequences) {
        sequences.push(s);
        sequenceRollout.push(r);
      }
    }
  });
  const batch = packBatch(sequences);
  const targetRollout = batch.targets.map((t) => sequenceRollout[t.sequence]);
  let teacher: PackedBatch | null = null;
  let sdcc: SdccBatch | null = null;
  const pairs: StepLayout['pairs'] = [];
  if (method === 'sdcc' && pairsById.length > 0) {
    // Rows that predict each diverging leaf: in the student batch and in its teacher sequence.
    const studentRow = new Map(batch.targets.map((t) => [`${sequenceRollout[t.sequence]}:${t.id}`, t.predictor]));
    if (packedTeacher) sdcc = packSdccBatch(batch, unions);
    else teacher = packBatch(teachers);
    const teacherRow = new Map((sdcc?.teacherTargets ?? teacher!.targets).map((t) => [`${t.sequence}:${t.id}`, t.predictor]));
    for (const p of pairsById) {
      const s = studentRow.get(`${p.rollout}:${p.id}`);
      const q = teacherRow.get(`${p.teacher}:${p.id}`);
      if (s === undefined || q === undefined)
        throw new Error(`sdcc: diverging leaf ${p.id} of rollout ${trees[p.rollout].rollout.id} has no student or teacher row`);
      pairs.push({ rollout: p.rollout, studentRow: s, teacherRow: q });
    }
  }
  const measuresLive = options.conditioningDrift ?? true;
  let live: PackedBatch | null = null;
  if (measuresLive && method !== 'sdcc' && !EXACT_METHODS.includes(method)) {
    live = packBatch(trees.map((_, r) => (plans(r, 'packed-4d') as SequencePlan).sequences[0]));
    if (live.targets.length === 0) live = null;
  }
  return { batch, targetRollout, teacher, sdcc, pairs, live, measuresLive, exact: EXACT_METHODS.includes(method), nPacked, nFinal, divergingLeaves };
}
