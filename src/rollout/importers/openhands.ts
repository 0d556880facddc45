// OpenHands trajectories (a JSON array of events, each an action or an observation with `id`, `source`,
// `cause`) into one v1 rollout in text form. Actions of the agent are targets, observations and the
// user's messages context; each condensation (`action: "condensation"`) is one edit whose view drops
// exactly the events it forgets and shows its summary (if any) at `summary_offset`, as OpenHands' View does.

import { quote } from '../errors';
import { MAX_NESTING, nestsDeeperThan } from '../nesting';
import type { RolloutJson } from '../format';
import type { FileImporter, ImportOptions } from './types';
import type { ImportReport } from './report';
import type { Span, ViewItem } from './textRollout';
import { createTranscript, elementLines, failAt, jsonDocument, type PieceTag } from './transcript';
import { isObject, type Json } from '../records';

export const OPENHANDS = 'openhands';

/** Events that never reach the model (state changes, bookkeeping), by action or observation name. */
const NOT_CONTEXT = new Set(['change_agent_state', 'agent_state_changed', 'null', 'condensation_request', 'user_rejected']);
// (A `recall` action only asks for workspace knowledge; the `recall` observation that answers it is context.)

function isEvent(v: unknown): v is Json {
  return isObject(v) && typeof v.id === 'number' && typeof v.source === 'string' && (typeof v.action === 'string' || typeof v.observation === 'string');
}

/** Whether a parsed document is an OpenHands trajectory: a list of events (or an evaluation output holding one). */
export function looksLikeOpenHands(sample: readonly unknown[]): boolean {
  if (sample.length !== 1) return false;
  const events = eventsOf(sample[0])?.events;
  return events !== undefined && events.length > 0 && events.slice(0, 20).every(isEvent);
}

/** The events a trajectory document holds: the array itself, or `{history: [...]}` / `{trajectory: [...]}` of an evaluation output. */
function eventsOf(doc: unknown): { events: unknown[]; key?: string } | undefined {
  if (Array.isArray(doc)) return { events: doc };
  if (isObject(doc)) {
    for (const key of ['history', 'trajectory']) if (Array.isArray(doc[key])) return { events: doc[key] as unknown[], key };
  }
  return undefined;
}

export function importOpenHandsText(text: string, file: string, options: ImportOptions = {}): { rollout: RolloutJson; report: ImportReport } {
  const doc = jsonDocument(text, file);
  const found = eventsOf(doc);
  if (!found) failAt(file, undefined, `expected an OpenHands trajectory (a JSON array of events), got ${quote(doc)}`);
  const { events, key } = found!;
  const lines = elementLines(text, key);
  const lineOf = (i: number) => lines[i];
  const t = createTranscript(OPENHANDS, options);
  const { report, rollout } = t;
  /** Every event id seen (forgotten or not) and the live spans of each id still in the view. */
  const seen = new Set<number>();
  const forgotten = new Set<number>();
  /** Event ids in the view (not forgotten, condensations left out), in order: summary_offset counts in these. */
  let viewIds: number[] = [];
  let lastId = -Infinity;
  let summaryKey: string | null = null;

  const json = (value: unknown, at: number) => {
    if (nestsDeeperThan(value)) failAt(file, lineOf(at), `event nests deeper than ${MAX_NESTING} levels`);
    return JSON.stringify(value);
  };

  events.forEach((event, i) => {
    const line = lineOf(i);
    report.read();
    const fail = (reason: string): never => failAt(file, line, `event ${i}: ${reason}`);
    if (!isObject(event)) fail(`expected an event object, got ${quote(event)}`);
    const e = event as Json;
    const id = e.id;
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) fail(`id must be an integer >= 0, got ${quote(id)}`);
    const n = id as number;
    if (seen.has(n)) fail(`id ${n} appears twice`);
    if (n <= lastId) fail(`id ${n} comes after id ${lastId} (ids must increase)`);
    lastId = n;
    seen.add(n);
    if (e.cause !== undefined && e.cause !== null) {
      if (typeof e.cause !== 'number' || !seen.has(e.cause) || e.cause === n) fail(`cause ${quote(e.cause)} names no earlier event`);
    }
    if (typeof e.source !== 'string') fail(`source must be a string, got ${quote(e.source)}`);
    const action = e.action;
    const observation = e.observation;
    if ((typeof action === 'string') === (typeof observation === 'string')) fail('an event has exactly one of "action" and "observation" (a string)');
    const name = (action ?? observation) as string;
    const keyOf = String(n);

    if (action === 'condensation') {
      const args = e.args ?? {};
      if (!isObject(args)) fail(`condensation args must be an object, got ${quote(args)}`);
      const a = args as Json;
      let ids: number[];
      if (a.forgotten_event_ids !== undefined && a.forgotten_event_ids !== null) {
        if (!Array.isArray(a.forgotten_event_ids) || !a.forgotten_event_ids.every((x) => typeof x === 'number' && Number.isInteger(x))) {
          fail(`forgotten_event_ids must be a list of event ids, got ${quote(a.forgotten_event_ids)}`);
        }
        ids = a.forgotten_event_ids as number[];
        const unknown = ids.find((x) => !seen.has(x) || x === n);
        if (unknown !== undefined) fail(`condensation forgets event ${unknown}, which is not an earlier event of the trajectory`);
      } else {
        const { forgotten_events_start_id: start, forgotten_events_end_id: end } = a;
        if (typeof start !== 'number' || typeof end !== 'number' || !Number.isInteger(start) || !Number.isInteger(end)) {
          fail(
            `condensation needs forgotten_event_ids or integer forgotten_events_start_id and forgotten_events_end_id, got ${quote(start)} and ${quote(end)}`,
          );
        }
        ids = [...seen].filter((x) => x >= (start as number) && x <= (end as number) && x !== n);
        if (ids.length === 0) fail(`condensation range ${start}..${end} names no earlier event`);
      }
      const summary = a.summary;
      if (summary !== undefined && summary !== null && typeof summary !== 'string') fail(`summary must be a string, got ${quote(summary)}`);
      const offset = a.summary_offset;
      if (offset !== undefined && offset !== null && (typeof offset !== 'number' || !Number.isInteger(offset) || offset < 0)) {
        fail(`summary_offset must be an integer >= 0, got ${quote(offset)}`);
      }
      for (const x of ids) forgotten.add(x);
      viewIds = viewIds.filter((x) => !forgotten.has(x));
      // The new view: every live piece of an event not forgotten; a new summary replaces the last one.
      const hasSummary = typeof summary === 'string' && summary.length > 0;
      const keep = (s: Span<PieceTag>) => (s.tag.key === summaryKey ? !hasSummary : !forgotten.has(Number(s.tag.key)));
      const items: ViewItem<PieceTag>[] = rollout.live.filter(keep).map((s) => ({ keep: s }));
      if (hasSummary) {
        const at = typeof offset === 'number' ? offset : 0;
        // Before the pieces of the view's event at `at`, or of the first later event with text (after all when none).
        const before = at < viewIds.length ? viewIds[at] : Infinity;
        let pos = items.findIndex((it) => 'keep' in it && Number(it.keep.tag.key) >= before);
        if (pos < 0) pos = items.length;
        summaryKey = `summary@${n}`;
        items.splice(pos, 0, { insert: { role: 'summary', text: summary as string }, tag: { text: summary as string, key: summaryKey } });
      }
      if (rollout.live.length === 0) fail('condensation before any event of the context');
      if (rollout.edit(items)) {
        report.edit('condensation');
        report.imported(line);
      } else {
        report.problem(line, 'condensation forgets nothing in the view and adds no summary: no edit');
        report.skip('condensation that changes nothing', line);
      }
      return;
    }
    viewIds.push(n);
    if (NOT_CONTEXT.has(name) || action === 'recall') {
      report.skip(`not model context (${action !== undefined ? 'action' : 'observation'} ${name})`, line);
      return;
    }
    let appended = 0;
    const add = (role: 'prompt' | 'obs' | 'act', text: unknown) => {
      if (typeof text === 'string' && text && t.append(role, text, keyOf)) appended++;
    };
    if (e.args !== undefined && !isObject(e.args)) fail(`args must be an object, got ${quote(e.args)}`);
    const args = (e.args ?? {}) as Json;
    if (typeof observation === 'string') {
      if (e.content !== undefined && typeof e.content !== 'string') fail(`observation content must be a string, got ${quote(e.content)}`);
      add('obs', e.content);
    } else if (action === 'system') {
      add('prompt', args.content);
    } else if (e.source === 'user' || e.source === 'environment') {
      if (action === 'message') add('prompt', args.content ?? e.message);
      else add('prompt', json({ action, args }, i));
    } else if (action === 'message') {
      add('act', args.content ?? e.message);
    } else if (action === 'think') {
      add('act', args.thought);
    } else {
      // A tool call: the agent's text before it (thought), then the call.
      const { thought, ...rest } = args;
      add('act', thought);
      add('act', json({ action, args: rest }, i));
    }
    if (appended) report.imported(line);
    else report.skip('no content', line);
  });
  if (rollout.events === 0) failAt(file, undefined, 'no event with text: nothing the model read or wrote');
  const id = file.replace(/^.*[\\/]/, '').replace(/\.json$/i, '') || OPENHANDS;
  return t.finish(id, {});
}

/** The importer of its row in the format table (detect.ts `formats`). */
export const openHandsImporter: FileImporter = {
  name: OPENHANDS,
  detect: (sample) => looksLikeOpenHands(sample),
  readText(text, file, options = {}) {
    const { rollout, report } = importOpenHandsText(text, file, options);
    return { rollouts: [{ value: rollout }], report: { kind: 'records', report } };
  },
};
