// `mw plan FILE --method M [--json]`: the scoring plan a replay method feeds the model, laid out as
// the trainer runs it (SDCC's packed teacher shares the student's rows; `total` counts the rows
// run), built and printed one rollout at a time (a plan of a long rollout is streamed in pieces).

import { buildPlan } from '../plan/build';
import { planJsonChunks } from '../plan/json';
import { planNeeds } from '../plan/needs';
import { METHODS, isMethod, type Plan, type PlanSequence } from '../plan/types';
import { deriveTree } from '../tree/derive';
import { UsageError, type Command } from './command';
import { MAX_PACKED_FLAG, createJsonOutput, fileArgument, formatIds, formatTable, maxPackedFlag, openRolloutFile, validateRolloutFile } from './shared';

const TEACHERS = ['logit-tree', 'packed-4d'] as const;

function sequenceRow(name: string, s: PlanSequence): (string | number)[] {
  return [
    name,
    s.ids.length,
    s.targets.length,
    formatIds(
      s.targets.map((t) => t.id),
      32,
    ),
  ];
}

function planTable(id: string, plan: Plan): string {
  const needs = planNeeds(plan);
  const rows =
    plan.method === 'sdcc'
      ? [sequenceRow('student', plan.student), ...plan.teachers.map((s, i) => sequenceRow(`teacher ${i}`, s))]
      : plan.sequences.map((s, i) => sequenceRow(`sequence ${i}`, s));
  rows.push(['total', needs.rows, needs.sequences.reduce((n, s) => n + s.targets.length, 0), '']);
  let pairs = '';
  if (plan.method === 'sdcc') {
    pairs = `, ${plan.pairs.length} KL pairs (diverging leaves)`;
    // The packed teacher's first rows are the final walk: the step runs them once, as the student.
    if (plan.sharedRows) pairs += `; teacher 0's first ${plan.sharedRows} rows are the student's, run once`;
  }
  return `${id}: ${plan.method}${pairs}\n${formatTable(['', 'tokens', 'targets', 'target ids'], rows)}`;
}

export const planCommand: Command = {
  name: 'plan',
  summary: 'the scoring plan of a replay method: sequences, positions, end[] visibility, targets',
  usage: ['mw plan FILE --method M [--json] [--teacher T] [--max-packed N]'],
  details: `M is one of ${METHODS.join(', ')}.`,
  flags: {
    method: { type: 'string', value: 'M', help: 'the replay method' },
    json: { type: 'boolean', help: 'print the plan as JSON (an array of plans for JSONL)' },
    teacher: { type: 'string', value: 'T', help: `sdcc only: teacher layout, ${TEACHERS.join(' or ')} (default packed-4d)` },
    'max-packed': MAX_PACKED_FLAG,
  },
  async run(args, io) {
    const method = args.flags.method;
    if (typeof method !== 'string') throw new UsageError(`--method is required (${METHODS.join(', ')})`);
    if (!isMethod(method)) throw new UsageError(`unknown method "${method}" (${METHODS.join(', ')})`);
    const teacher = args.flags.teacher as (typeof TEACHERS)[number] | undefined;
    if (teacher !== undefined && !(TEACHERS as readonly unknown[]).includes(teacher)) {
      throw new UsageError(`unknown teacher layout "${teacher}" (${TEACHERS.join(', ')})`);
    }
    const limit = maxPackedFlag(args);
    const stream = await openRolloutFile(fileArgument(args));
    // A plan grows with N_packed: the file is validated first (every rollout's plan size against the
    // limit included, from its events), then each plan is built and written (in pieces, the JSON of
    // one plan may exceed V8's longest string) before the next.
    await validateRolloutFile(stream, { limit, method });
    const out = createJsonOutput(io, stream.layout);
    let first = true;
    for await (const rollout of stream.rollouts()) {
      const plan = buildPlan(deriveTree(rollout), method, { sdccTeacher: teacher });
      if (args.flags.json) {
        await out.item(async (write) => {
          let piece = '';
          for (const chunk of planJsonChunks(plan)) {
            piece += chunk;
            if (piece.length >= 1 << 20) {
              await write(piece);
              piece = '';
            }
          }
          await write(piece);
        });
      } else {
        io.out(`${first ? '' : '\n'}${planTable(rollout.id, plan)}`);
        await io.drain?.();
      }
      first = false;
    }
    if (args.flags.json) out.finish();
    return 0;
  },
};
