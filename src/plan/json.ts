// The plan as `mw plan --json` prints it (docs/cli.md): plain arrays, sequences as
// {ids, positions, end, targets: [{index, id}]}.

import type { Plan, PlanSequence, PlanTarget, SdccPair } from './types';

const targetJson = (t: PlanTarget) => ({ index: t.index, id: t.id });
const pairJson = (p: SdccPair) => ({ id: p.id, studentIndex: p.studentIndex, teacher: p.teacher, teacherIndex: p.teacherIndex });

export function sequenceToJson(s: PlanSequence) {
  return {
    ids: Array.from(s.ids),
    positions: Array.from(s.positions),
    end: Array.from(s.end),
    targets: s.targets.map(targetJson),
  };
}

type SequenceJson = ReturnType<typeof sequenceToJson>;
export type PlanJson =
  | { method: string; sequences: SequenceJson[] }
  | { method: 'sdcc'; student: SequenceJson; teachers: SequenceJson[]; sharedRows: number; pairs: SdccPair[] };

export function planToJson(plan: Plan): PlanJson {
  if (plan.method === 'sdcc') {
    return {
      method: 'sdcc',
      student: sequenceToJson(plan.student),
      teachers: plan.teachers.map(sequenceToJson),
      sharedRows: plan.sharedRows,
      pairs: plan.pairs.map(pairJson),
    };
  }
  return { method: plan.method, sequences: plan.sequences.map(sequenceToJson) };
}

/** Numbers per piece of streamed JSON: pieces stay ~1 MB, far below V8's string length limit. */
const CHUNK = 1 << 17;

function* numbers(values: ArrayLike<number>): Generator<string> {
  yield '[';
  for (let from = 0; from < values.length; from += CHUNK) {
    const part = Array.prototype.join.call(Array.prototype.slice.call(values, from, from + CHUNK), ',');
    yield from === 0 ? part : `,${part}`;
  }
  yield ']';
}

function* records<T>(items: readonly T[], json: (item: T) => unknown): Generator<string> {
  yield '[';
  for (let from = 0; from < items.length; from += CHUNK / 8) {
    const part = items
      .slice(from, from + CHUNK / 8)
      .map((item) => JSON.stringify(json(item)))
      .join(',');
    yield from === 0 ? part : `,${part}`;
  }
  yield ']';
}

function* sequenceChunks(s: PlanSequence): Generator<string> {
  yield '{"ids":';
  yield* numbers(s.ids);
  yield ',"positions":';
  yield* numbers(s.positions);
  yield ',"end":';
  yield* numbers(s.end);
  yield ',"targets":';
  yield* records(s.targets, targetJson);
  yield '}';
}

function* sequencesChunks(sequences: readonly PlanSequence[]): Generator<string> {
  yield '[';
  for (let i = 0; i < sequences.length; i++) {
    if (i > 0) yield ',';
    yield* sequenceChunks(sequences[i]);
  }
  yield ']';
}

/**
 * The text of JSON.stringify(planToJson(plan)) in pieces of about a megabyte: a plan of a long
 * rollout is larger than the longest string V8 can make (~512 MB), and `mw plan` streams it.
 */
export function* planJsonChunks(plan: Plan): Generator<string> {
  if (plan.method === 'sdcc') {
    yield '{"method":"sdcc","student":';
    yield* sequenceChunks(plan.student);
    yield ',"teachers":';
    yield* sequencesChunks(plan.teachers);
    yield `,"sharedRows":${plan.sharedRows}`;
    yield ',"pairs":';
    yield* records(plan.pairs, pairJson);
    yield '}';
    return;
  }
  yield `{"method":${JSON.stringify(plan.method)},"sequences":`;
  yield* sequencesChunks(plan.sequences);
  yield '}';
}
