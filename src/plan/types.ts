// Scoring plans (docs/methods.md) as plain data for the engine: sequences of physical ids with token
// values, position ids, the `end[]` visibility encoding, and the targets each sequence scores.

export const METHODS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d', 'sdcc'] as const;
export type Method = (typeof METHODS)[number];
/** Methods whose plan is a list of sequences (every method but sdcc). */
export type SequenceMethod = Exclude<Method, 'sdcc'>;
/** The methods that score targets, in the docs' order: every method but sdcc, which is an objective. */
export const SEQUENCE_METHODS: readonly SequenceMethod[] = METHODS.filter((m): m is SequenceMethod => m !== 'sdcc');

export function isMethod(name: string): name is Method {
  return (METHODS as readonly string[]).includes(name);
}

export interface PlanTarget {
  /** Index of the target in its sequence. */
  index: number;
  /** Physical id. */
  id: number;
  /** Token value (the label). */
  token: number;
  /** Index whose logits predict the target: the largest visible index below `index`. */
  predictor: number;
  /** The rollout-time logprob, when the rollout has one. */
  rolloutLogprob?: number;
}

/** One attention block: query i sees key k iff k <= i < end[k]. */
export interface PlanSequence {
  ids: Int32Array;
  tokens: Int32Array;
  positions: Int32Array;
  end: Uint32Array;
  /** Ordered by index. */
  targets: PlanTarget[];
}

export interface SequencePlan {
  method: SequenceMethod;
  sequences: PlanSequence[];
}

export interface SdccPair {
  /** The diverging leaf's physical id. */
  id: number;
  /** Its index in the student sequence (final prefix). */
  studentIndex: number;
  /** Which teacher sequence holds it, and where (live prefix). */
  teacher: number;
  teacherIndex: number;
}

export interface SdccPlan {
  method: 'sdcc';
  /** The naive-compressed sequence: task loss, with gradient. */
  student: PlanSequence;
  /** Sequences holding the diverging leaves under their live prefixes: no gradient. */
  teachers: PlanSequence[];
  /**
   * Rows at the start of teachers[0] that are the student's own rows (the packed teacher: its
   * tree shares the final walk, which the step computes once); 0 for branch teachers.
   */
  sharedRows: number;
  pairs: SdccPair[];
}

export type Plan = SequencePlan | SdccPlan;

export interface PlanOptions {
  /**
   * How SDCC's teachers are laid out: one packed tree of the final walk and the diverging leaves'
   * paths (default: sdccUnion, the student's rows shared, so the teacher adds only the nodes the
   * final walk lacks) or one causal sequence per branch holding a diverging leaf.
   */
  sdccTeacher?: 'logit-tree' | 'packed-4d';
}
