// Gemini CLI sessions into one v1 rollout in text form, from either layout the CLI writes: the older
// single JSON file (`{sessionId, projectHash, startTime, lastUpdated, messages}`) and the append-only
// JSONL recording (a metadata line, then message records, `{"$set": ...}` patches and `{"$rewindTo": id}`).
// User turns are prompts; a gemini turn's text and tool calls are targets, its tool results observations.
// A recording that rewrites the message list (`$set.messages` after messages were shown: the CLI's
// compression or resume) or rewinds it is an edit whose view is the new list.

import { quote } from '../errors';
import { MAX_NESTING, nestsDeeperThan } from '../nesting';
import type { AppendRole, RolloutJson } from '../format';
import type { FileImporter, ImportOptions } from './types';
import type { ImportReport } from './report';
import { createTranscript, elementLines, failAt, jsonDocument, type NewViewItem } from './transcript';
import { isObject, type Json, readJsonLines } from '../records';

export const GEMINI = 'gemini';

const MESSAGE_TYPES = new Set(['user', 'gemini', 'info', 'error', 'warning']);
const isMessage = (v: unknown): v is Json => isObject(v) && typeof v.type === 'string' && MESSAGE_TYPES.has(v.type) && 'content' in v;
const isMetadata = (v: unknown): v is Json =>
  isObject(v) && typeof v.sessionId === 'string' && (typeof v.projectHash === 'string' || typeof v.startTime === 'string');

/** Whether sampled records are a Gemini CLI session: the single JSON file, or a recording (metadata line, messages, patches). */
export function looksLikeGemini(sample: readonly unknown[]): boolean {
  const first = sample[0];
  if (isMetadata(first) && Array.isArray(first.messages) && first.messages.every((m) => isObject(m) && typeof m.type === 'string')) return sample.length === 1;
  if (!isMetadata(first) || 'type' in first || 'messages' in first) return false;
  return sample.slice(1).every((v) => isMessage(v) || (isObject(v) && ('$set' in v || '$rewindTo' in v)));
}

interface Piece {
  role: AppendRole;
  text: string;
}

/** Gemini API parts (or a string) as text; a part of another kind is rendered as JSON. */
function partsText(content: unknown, what: string, fail: (reason: string) => never, skip: (type: string) => void): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  const parts = Array.isArray(content) ? content : [content];
  const out: string[] = [];
  for (const part of parts) {
    if (typeof part === 'string') out.push(part);
    else if (!isObject(part)) fail(`${what} part ${quote(part)} is not an object`);
    else if (typeof part.text === 'string') {
      if (part.thought === true) skip('thought part');
      else out.push(part.text);
    } else if (isObject(part.functionResponse)) {
      const r = part.functionResponse.response;
      out.push(isObject(r) && typeof r.output === 'string' ? r.output : JSON.stringify(r ?? null));
    } else if (isObject(part.inlineData) || isObject(part.fileData)) out.push('[file]');
    else {
      if (nestsDeeperThan(part)) fail(`${what} part nests deeper than ${MAX_NESTING} levels`);
      out.push(JSON.stringify(part));
    }
  }
  return out.join('\n');
}

/** A message's pieces in the order the model saw them (none for UI-only messages). */
function piecesOf(m: Json, fail: (reason: string) => never, skip: (type: string) => void, callIds: Map<string, string>): Piece[] {
  if (typeof m.id !== 'string' || !m.id) fail(`message id must be a non-empty string, got ${quote(m.id)}`);
  if (typeof m.type !== 'string') fail(`message type must be a string, got ${quote(m.type)}`);
  if (m.type === 'user') {
    const text = partsText(m.content, 'content', fail, skip);
    return text ? [{ role: 'prompt', text }] : [];
  }
  if (m.type !== 'gemini') return [];
  const pieces: Piece[] = [];
  if (Array.isArray(m.thoughts) && m.thoughts.length) skip('thoughts (summaries)');
  const text = partsText(m.content, 'content', fail, skip);
  if (text) pieces.push({ role: 'act', text });
  if (m.toolCalls === undefined || m.toolCalls === null) return pieces;
  if (!Array.isArray(m.toolCalls)) fail(`toolCalls must be a list, got ${quote(m.toolCalls)}`);
  const results: Piece[] = [];
  (m.toolCalls as unknown[]).forEach((call, i) => {
    if (!isObject(call)) fail(`toolCalls[${i}] must be an object, got ${quote(call)}`);
    const c = call as Json;
    if (typeof c.id !== 'string' || !c.id) fail(`toolCalls[${i}].id must be a non-empty string, got ${quote(c.id)}`);
    if (typeof c.name !== 'string') fail(`toolCalls[${i}].name must be a string, got ${quote(c.name)}`);
    const owner = callIds.get(c.id as string);
    if (owner !== undefined && owner !== m.id) fail(`tool call id ${quote(c.id)} is used by message ${quote(owner)} too`);
    callIds.set(c.id as string, m.id as string);
    if (nestsDeeperThan(c.args)) fail(`toolCalls[${i}].args nest deeper than ${MAX_NESTING} levels`);
    pieces.push({ role: 'act', text: JSON.stringify({ name: c.name, args: c.args ?? {} }) });
    const result = partsText(c.result, `toolCalls[${i}].result`, fail, skip);
    if (result) results.push({ role: 'obs', text: result });
  });
  // The results come back in the next (user) turn, after all of the calls.
  return [...pieces, ...results];
}

function firstLineParses(text: string): boolean {
  const end = text.indexOf('\n');
  try {
    JSON.parse(end < 0 ? text : text.slice(0, end));
    return true;
  } catch {
    return false;
  }
}

export function importGeminiText(text: string, file: string, options: ImportOptions = {}): { rollout: RolloutJson; report: ImportReport } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  // The single JSON file when the text is one document holding `messages`; else the recording.
  let records: { line: number; value: unknown }[];
  let layout: 'json' | 'jsonl';
  const trimmed = body.trimStart();
  let doc: unknown;
  if (trimmed.startsWith('{')) {
    try {
      doc = JSON.parse(body);
    } catch {
      doc = undefined;
    }
  }
  if (isObject(doc) && Array.isArray(doc.messages)) {
    layout = 'json';
    const lines = elementLines(body, 'messages');
    records = [{ line: 1, value: { ...doc, messages: undefined } }, ...(doc.messages as unknown[]).map((value, i) => ({ line: lines[i], value }))];
  } else if (trimmed.startsWith('{') && !firstLineParses(trimmed)) {
    // A pretty-printed document (a single file cut short, say): its own parse error names the line.
    jsonDocument(body, file);
    failAt(file, 1, 'expected a Gemini CLI session (sessionId and messages, or a recording whose first line is its metadata)');
  } else if (trimmed.startsWith('{') && !body.trim().includes('\n')) {
    failAt(file, 1, 'expected a Gemini CLI session (sessionId and messages, or a recording whose first line is its metadata)');
  } else {
    layout = 'jsonl';
    records = readJsonLines(body, file);
  }

  const t = createTranscript(GEMINI, options);
  const { report, rollout } = t;
  /** The session's message list as the CLI holds it: ids in order, each with its pieces. */
  let list: { id: string; pieces: Piece[]; line: number }[] = [];
  /** Position of each id in `list` (rebuilt when the list is cut or replaced). */
  let index = new Map<string, number>();
  const reindex = () => {
    index = new Map(list.map((m, i) => [m.id, i]));
  };
  const callIds = new Map<string, string>();
  let sessionId: string | undefined;
  let meta: Json = {};

  const viewOf = (l: typeof list): NewViewItem[] => l.flatMap((m) => m.pieces.map((p) => ({ role: p.role, text: p.text, key: m.id })));
  const appendPieces = (pieces: Piece[], id: string) => {
    for (const p of pieces) t.append(p.role, p.text, id);
  };

  const message = (m: Json, line: number) => {
    const fail = (reason: string): never => failAt(file, line, reason);
    const pieces = piecesOf(m, fail, (type) => report.skipBlock(type), callIds);
    const id = m.id as string;
    const at = index.get(id) ?? -1;
    if (at < 0) {
      index.set(id, list.length);
      list.push({ id, pieces, line });
      appendPieces(pieces, id);
      if (pieces.length) report.imported(line);
      else report.skip(MESSAGE_TYPES.has(m.type as string) && m.type !== 'user' && m.type !== 'gemini' ? `not model context (${m.type})` : 'no content', line);
      return;
    }
    // The CLI rewrites a message (a gemini turn gains its tool results): what is new is appended when
    // the message is the last one and only grew; any other rewrite is an edit to the new list.
    const old = list[at];
    const same = (a: Piece, b: Piece) => a.role === b.role && a.text === b.text;
    const grew = old.pieces.length <= pieces.length && old.pieces.every((p, i) => same(p, pieces[i]));
    list[at] = { id, pieces, line };
    if (grew && pieces.length === old.pieces.length) {
      report.skip('message rewritten without new content', line);
    } else if (grew && at === list.length - 1) {
      appendPieces(pieces.slice(old.pieces.length), id);
      report.imported(line);
    } else {
      report.problem(line, `message ${quote(id)} rewritten after later messages: imported as an edit`);
      if (t.replaceView(viewOf(list), 'rewrite')) report.imported(line);
      else report.skip('message rewritten without new content', line);
    }
  };

  for (const { line, value } of records) {
    report.read();
    if (!isObject(value)) failAt(file, line, `expected a Gemini CLI session record (an object), got ${quote(value)}`);
    if (layout === 'jsonl' && line === records[0].line && !isMetadata(value)) {
      failAt(file, line, 'expected the session metadata line ({sessionId, projectHash, startTime, ...}) first');
    }
    if (isMetadata(value) && !('type' in value)) {
      sessionId ??= value.sessionId as string;
      meta = { ...meta, ...(typeof value.projectHash === 'string' ? { projectHash: value.projectHash } : {}) };
      report.skip('session metadata', line);
    } else if ('$rewindTo' in value) {
      const id = value.$rewindTo;
      const at = typeof id === 'string' ? (index.get(id) ?? -1) : -1;
      if (at < 0) failAt(file, line, `$rewindTo names message ${quote(id)}, which the session does not hold`);
      list = list.slice(0, at);
      reindex();
      if (t.replaceView(viewOf(list), 'rewind')) report.imported(line);
      else report.skip('rewind that changes nothing', line);
    } else if ('$set' in value) {
      const set = value.$set;
      if (!isObject(set)) failAt(file, line, `$set must be an object, got ${quote(set)}`);
      const s = set as Json;
      if (s.messages === undefined) {
        report.skip('metadata update ($set)', line);
        continue;
      }
      if (!Array.isArray(s.messages)) failAt(file, line, `$set.messages must be a list of messages, got ${quote(s.messages)}`);
      const next: typeof list = (s.messages as unknown[]).map((m, i) => {
        if (!isObject(m)) failAt(file, line, `$set.messages[${i}] must be an object, got ${quote(m)}`);
        const pieces = piecesOf(
          m as Json,
          (reason) => failAt(file, line, `$set.messages[${i}]: ${reason}`),
          (type) => report.skipBlock(type),
          callIds,
        );
        return { id: (m as Json).id as string, pieces, line };
      });
      const wasEmpty = rollout.live.length === 0;
      list = next;
      reindex();
      if (wasEmpty) {
        for (const m of next) appendPieces(m.pieces, m.id);
        report.imported(line);
      } else if (t.replaceView(viewOf(list), 'compression')) report.imported(line);
      else report.skip('message list rewritten without change', line);
    } else if (typeof (value as Json).type === 'string') {
      message(value as Json, line);
    } else failAt(file, line, `not a Gemini CLI session record (a message with "type", "$set" or "$rewindTo"): ${quote(value)}`);
  }
  if (rollout.events === 0) failAt(file, undefined, 'no user or gemini message with text');
  return t.finish(sessionId ?? GEMINI, { ...(sessionId ? { sessionId } : {}), ...meta, layout });
}

/** The importer of its row in the format table (detect.ts `formats`). */
export const geminiImporter: FileImporter = {
  name: GEMINI,
  detect: (sample) => looksLikeGemini(sample),
  readText(text, file, options = {}) {
    const { rollout, report } = importGeminiText(text, file, options);
    return { rollouts: [{ value: rollout }], report: { kind: 'records', report } };
  },
};
