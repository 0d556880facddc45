// Agent-CLI session logs (one JSON record per line: user / assistant / system / ..., linked by
// uuid -> parentUuid) into one v1 rollout in text form. The main conversation chain is followed
// across compactions (compact_boundary: parentUuid null, logicalParentUuid to the last record
// before it); each compaction becomes an edit whose view is its summary (insert, role summary)
// plus the segment the record says it preserved; each microcompaction an edit that replaces the
// cleared tool results by their placeholder. Two passes over the lines, so memory follows the record
// count and the live view, not the file's bytes: index (agentSessionIndex.ts: links and flags to a
// plan), then convert (agentSessionConvert.ts: the planned records to events). Here: the drivers.

import { ValidationError } from '../errors';
import { ROLLOUT_FORMAT, type EventJson, type RolloutJson } from '../format';
import { invalidJson, tryParseJson } from '../records';
import { byteTokenizer, getTokenizer, type TokenizerName } from '../tokenizer';
import type { FileImporter } from './types';
import { readLines, type OpenSource } from './lines';
import { createReportBuilder, type ImportReport, type ReportBuilder } from './report';
import {
  createSessionIndex,
  field,
  indexRecord,
  planSession,
  str,
  type Entry,
  type RecordLine,
  type SessionIndex,
  type SessionPlan,
} from './agentSessionIndex';
import { isObject, type Json } from '../records';
import { convertRecord, createConversion, finishConversion, type Conversion } from './agentSessionConvert';

export { CLEARED_TOOL_RESULT } from './agentSessionConvert';
export type { RecordLine } from './agentSessionIndex';

export const AGENT_SESSION = 'agent-session';

export interface AgentSessionOptions {
  /** Rollout id; default: the session id of the records, else 'agent-session'. */
  id?: string;
  /** File name for error messages. */
  file?: string;
  /** How text is tokenized (docs/tokenizers.md); default byte. */
  tokenizer?: TokenizerName | (string & {});
}

/** The rollout's fields other than `events` (streamed importers write events one by one). */
export interface RolloutHead {
  format: typeof ROLLOUT_FORMAT;
  id: string;
  vocab: number;
  tokenizer: string;
  meta: { source: string; sessionId?: string; import: ImportReport };
}

// ---------------------------------------------------------------------------------------------
// Drivers: the same two passes over lines streamed from a source, or over lines in memory.

function parseLine(text: string, line: number, unterminated = false): RecordLine {
  const parsed = tryParseJson(text);
  if (parsed.ok) return { line, value: parsed.value };
  return unterminated ? { line, error: invalidJson(parsed.message), unfinished: true } : { line, error: invalidJson(parsed.message) };
}

const tokenizerOf = (options: AgentSessionOptions) => (options.tokenizer ? getTokenizer(options.tokenizer)! : byteTokenizer);

function finishPlan(index: SessionIndex, report: ReportBuilder, file: string): SessionPlan {
  const plan = planSession(index, report);
  if (plan.sessionRecords === 0) {
    throw new ValidationError({ file }, 'no agent-session records (JSON lines with "type": "user", "assistant", "system", ...)');
  }
  return plan;
}

function headFields(plan: SessionPlan, options: AgentSessionOptions): Omit<RolloutHead, 'meta'> {
  const tokenizer = tokenizerOf(options);
  return { format: ROLLOUT_FORMAT, id: options.id ?? plan.sessionId ?? AGENT_SESSION, vocab: tokenizer.vocab, tokenizer: tokenizer.name };
}

/**
 * Second pass over one line: convert it if the plan imports it, in plan order. A record the plan
 * converts later than a following line (a tool result read before its response's last call) waits
 * in `early` until its turn: memory follows the widest such reordering, not the file.
 */
function createPlanCursor(plan: SessionPlan, file: string, convert: (entry: Entry, ordinal: number, value: Json) => void) {
  const position = new Map<number, number>();
  plan.imports.forEach((e, i) => {
    position.set(e.line, i);
  });
  const early = new Map<number, Json>();
  let next = 0;
  return (line: number, value: () => unknown) => {
    const at = position.get(line);
    if (at === undefined) return;
    const v = value();
    if (!isObject(v) || str(v.uuid) !== plan.imports[at].uuid) {
      throw new ValidationError({ file, line }, 'the file changed while it was being imported');
    }
    early.set(at, v);
    for (let ready = early.get(next); ready !== undefined; ready = early.get(next)) {
      early.delete(next);
      convert(plan.imports[next], next, ready);
      next++;
    }
  };
}

function finishImport(plan: SessionPlan, conversion: Conversion, report: ReportBuilder, options: AgentSessionOptions, file: string): RolloutHead {
  const rollout = finishConversion(conversion);
  if (rollout.events === 0) throw new ValidationError({ file }, 'no user or assistant messages on the main chain');
  const meta: RolloutHead['meta'] = { source: AGENT_SESSION, import: report.finish({ rollouts: 1, events: rollout.events }) };
  if (plan.sessionId) meta.sessionId = plan.sessionId;
  return { ...headFields(plan, options), meta };
}

/**
 * Streams the import: events go to `emit` as they are made (the caller may write them out),
 * the rollout's other fields and the report come back at the end. `open` is called twice.
 * Throws a ValidationError (and has then emitted a partial sequence the caller must discard)
 * when the file is not a session log or yields no messages.
 */
export async function streamAgentSession(
  open: OpenSource,
  emit: (event: EventJson) => void,
  options: AgentSessionOptions & { onStart?: (head: Omit<RolloutHead, 'meta'>) => void } = {},
): Promise<RolloutHead> {
  const file = options.file ?? AGENT_SESSION;
  const report = createReportBuilder(AGENT_SESSION);
  const index = createSessionIndex(file);
  for await (const { text, line, unterminated } of readLines(open())) {
    if (text.trim()) indexRecord(index, report, parseLine(text, line, unterminated));
  }
  const plan = finishPlan(index, report, file);
  options.onStart?.(headFields(plan, options));
  const conversion = createConversion(plan, emit, report, tokenizerOf(options));
  const visit = createPlanCursor(plan, file, (entry, ordinal, value) => convertRecord(conversion, entry, ordinal, value));
  for await (const { text, line } of readLines(open())) {
    visit(line, () => {
      const parsed = parseLine(text, line);
      return 'value' in parsed ? parsed.value : undefined;
    });
  }
  return finishImport(plan, conversion, report, options, file);
}

/** The whole rollout in memory (UI loader, tests), from the file's text. */
export function importAgentSessionText(text: string, options: AgentSessionOptions = {}): { rollout: RolloutJson; report: ImportReport } {
  const lines = text.split('\n');
  const records: RecordLine[] = [];
  lines.forEach((raw, i) => {
    const t = raw.trim();
    // The last piece has no newline after it when the text does not end with one.
    if (t) records.push(parseLine(t, i + 1, i === lines.length - 1));
  });
  return importAgentSessionRecords(records, options);
}

/** Same, from records already parsed (the core's file reader hands these to file importers). */
export function importAgentSessionRecords(records: readonly RecordLine[], options: AgentSessionOptions = {}): { rollout: RolloutJson; report: ImportReport } {
  const file = options.file ?? AGENT_SESSION;
  const report = createReportBuilder(AGENT_SESSION);
  const index = createSessionIndex(file);
  for (const record of records) indexRecord(index, report, record);
  const plan = finishPlan(index, report, file);
  const events: EventJson[] = [];
  const conversion = createConversion(plan, (e) => events.push(e), report, tokenizerOf(options));
  const visit = createPlanCursor(plan, file, (entry, ordinal, value) => convertRecord(conversion, entry, ordinal, value));
  for (const record of records) visit(record.line, () => ('value' in record ? record.value : undefined));
  const { meta, ...fields } = finishImport(plan, conversion, report, options, file);
  return { rollout: { ...fields, events, meta }, report: meta.import };
}

const SESSION_TYPES = new Set(['user', 'assistant', 'system', 'summary', 'file-history-snapshot', 'attachment', 'progress', 'result']);

/** Whether records (the first 50 are looked at) are an agent-session log. */
export function looksLikeAgentSession(values: readonly unknown[]): boolean {
  let session = false;
  for (const v of values.slice(0, 50)) {
    if (!isObject(v)) continue;
    if ('format' in v || 'messages' in v) return false;
    if (typeof v.type === 'string' && SESSION_TYPES.has(v.type) && (str(v.uuid) || str(field(v, 'sessionId', 'session_id')))) {
      session = true;
    }
  }
  return session;
}

/** The importer of its row in the format table (src/rollout/importers/detect.ts `formats`). */
export const agentSessionImporter: FileImporter = {
  name: AGENT_SESSION,
  detect: (sample) => looksLikeAgentSession(sample),
  readText(text, file, options = {}) {
    const { rollout, report } = importAgentSessionText(text, { file, tokenizer: options.tokenizer });
    return { rollouts: [{ value: rollout }], report: { kind: 'records', report } };
  },
  async *rollouts(open, file, options = {}) {
    const events: EventJson[] = [];
    let fields: Omit<RolloutHead, 'meta'> | undefined;
    const head = await streamAgentSession(open, (event) => events.push(event), { file, tokenizer: options.tokenizer, onStart: (f) => (fields = f) });
    yield { value: { ...fields!, events, meta: head.meta } as RolloutJson };
    return { kind: 'records', report: head.meta.import };
  },
};
