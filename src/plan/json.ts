// The plan as `mw plan --json` prints it (docs/cli.md): plain arrays, sequences as
// {ids, positions, end, targets: [{index, id}]}.

import type { Plan, PlanSequence, SdccPair } from './types';

export interface PlanSequenceJson {
  ids: number[];
  positions: number[];
  end: number[];
  targets: { index: number; id: number }[];
}

export type PlanJson =
  | { method: string; sequences: PlanSequenceJson[] }
  | { method: 'sdcc'; student: PlanSequenceJson; teachers: PlanSequenceJson[]; sharedRows: number; pairs: SdccPair[] };

export function sequenceToJson(s: PlanSequence): PlanSequenceJson {
  return {
    ids: Array.from(s.ids),
    positions: Array.from(s.positions),
    end: Array.from(s.end),
    targets: s.targets.map((t) => ({ index: t.index, id: t.id })),
  };
}

export function planToJson(plan: Plan): PlanJson {
  if (plan.method === 'sdcc') {
    return {
      method: 'sdcc',
      student: sequenceToJson(plan.student),
      teachers: plan.teachers.map(sequenceToJson),
      sharedRows: plan.sharedRows,
      pairs: plan.pairs.map((p) => ({ id: p.id, studentIndex: p.studentIndex, teacher: p.teacher, teacherIndex: p.teacherIndex })),
    };
  }
  return { method: plan.method, sequences: plan.sequences.map(sequenceToJson) };
}
