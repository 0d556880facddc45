// Codex CLI rollouts (`rollout-*.jsonl`: one `{timestamp, type, payload}` per line) into one v1 rollout
// in text form. `response_item`s are what the model saw and wrote (messages, function calls and
// their outputs, reasoning); a `compacted` item's `replacement_history` is the new live view, one edit
// that keeps the surviving items and inserts the new ones. Everything else is reported, never lost.

import { quote } from '../errors';
import { MAX_NESTING, nestsDeeperThan } from '../nesting';
import type { FileImporter, ImportOptions } from './types';
import type { ImportReport } from './report';
import type { RolloutJson, AppendRole } from '../format';
import { createTranscript, failAt, needString, parsedArguments, type NewViewItem } from './transcript';
import { isObject, type Json, readJsonLines } from '../records';

export const CODEX = 'codex';

const RECORD_TYPES = new Set(['session_meta', 'turn_context', 'response_item', 'event_msg', 'compacted']);
/** Calls whose output comes back in a later item with the same call_id. */
const CALL_TYPES = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

/** Response item types, for the older layout that wrote them bare (without `{type: "response_item", payload}`). */
const ITEM_TYPES = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'web_search_call',
]);

/** The first line of the older layout: the session's `{id, timestamp, instructions?}`, no type. */
const isLegacyMeta = (v: unknown): v is Json =>
  isObject(v) && typeof v.id === 'string' && typeof v.timestamp === 'string' && !('type' in v) && !('format' in v);
const isLegacyRecord = (v: unknown) =>
  isObject(v) && (('record_type' in v && !('type' in v)) || (typeof v.type === 'string' && ITEM_TYPES.has(v.type) && !('payload' in v)));

/**
 * Whether sampled records are a Codex rollout: every one `{type, payload}` with a Codex record type,
 * or the older layout (a `{id, timestamp}` line, then bare response items and `{record_type}` lines).
 */
export function looksLikeCodex(sample: readonly unknown[]): boolean {
  if (sample.length === 0) return false;
  if (isLegacyMeta(sample[0])) return sample.length > 1 && sample.slice(1).every(isLegacyRecord);
  return sample.every((v) => isObject(v) && typeof v.type === 'string' && RECORD_TYPES.has(v.type) && isObject(v.payload));
}

interface Piece {
  role: AppendRole;
  text: string;
}

/** One response item as the pieces it puts in the context (none: left out, counted by the caller). */
function piecesOf(item: Json, where: (reason: string) => never, skip: (type: string) => void): Piece[] {
  const type = item.type;
  if (typeof type !== 'string') return where(`response item has no string "type" (got ${quote(type)})`);
  const json = (value: unknown) => {
    if (nestsDeeperThan(value)) where(`${type} nests deeper than ${MAX_NESTING} levels`);
    return JSON.stringify(value);
  };
  if (type === 'message') {
    const role = item.role;
    if (typeof role !== 'string') return where(`message role must be a string, got ${quote(role)}`);
    if (!Array.isArray(item.content)) return where(`message content must be a list of parts, got ${quote(item.content)}`);
    const texts: string[] = [];
    for (const part of item.content) {
      if (!isObject(part) || typeof part.type !== 'string') return where(`message content part ${quote(part)} has no string "type"`);
      if (part.type === 'input_text' || part.type === 'output_text' || part.type === 'text') {
        if (typeof part.text !== 'string') return where(`${part.type} text must be a string, got ${quote(part.text)}`);
        texts.push(part.text);
      } else if (part.type === 'input_image') texts.push('[image]');
      else if (part.type === 'refusal' && typeof part.refusal === 'string') texts.push(part.refusal);
      else skip(part.type);
    }
    const text = texts.join('\n');
    if (!text) return [];
    if (role === 'assistant') return [{ role: 'act', text }];
    if (role === 'user' || role === 'developer' || role === 'system') return [{ role: 'prompt', text }];
    return where(`message role ${quote(role)} is not one of user, developer, system, assistant`);
  }
  if (type === 'function_call') {
    const name = item.name;
    if (typeof name !== 'string') return where(`function_call name must be a string, got ${quote(name)}`);
    if (typeof item.arguments !== 'string') return where(`function_call arguments must be a string, got ${quote(item.arguments)}`);
    return [{ role: 'act', text: json({ name, arguments: parsedArguments(item.arguments) }) }];
  }
  if (type === 'custom_tool_call') {
    if (typeof item.name !== 'string') return where(`custom_tool_call name must be a string, got ${quote(item.name)}`);
    return [{ role: 'act', text: json({ name: item.name, input: item.input ?? '' }) }];
  }
  if (type === 'local_shell_call') return [{ role: 'act', text: json({ name: 'local_shell', action: item.action ?? {} }) }];
  if (type === 'web_search_call') return [{ role: 'act', text: json({ name: 'web_search', action: item.action ?? {} }) }];
  if (OUTPUT_TYPES.has(type)) return [{ role: 'obs', text: outputText(item.output, type, where, json) }];
  if (type === 'reasoning') {
    // Readable reasoning tokens (open models) are generated text; an encrypted blob or a summary written
    // by another model is not what the policy generated: left out.
    const content = Array.isArray(item.content) ? item.content : [];
    const text = content
      .filter((p): p is Json => isObject(p) && p.type === 'reasoning_text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('\n');
    if (text) return [{ role: 'act', text }];
    skip('reasoning (encrypted or summary only)');
    return [];
  }
  skip(type);
  return [];
}

/** A tool output as the model reads it: a string, `{content}`, or a list of content items. */
function outputText(output: unknown, type: string, where: (reason: string) => never, json: (v: unknown) => string): string {
  if (typeof output === 'string') return output;
  if (isObject(output) && typeof output.content === 'string') return output.content;
  if (Array.isArray(output)) {
    return output
      .map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : isObject(p) && /image/.test(String(p.type)) ? '[image]' : json(p)))
      .join('\n');
  }
  return where(`${type} output must be a string, {content} or a list of content items, got ${quote(output)}`);
}

export function importCodexText(text: string, file: string, options: ImportOptions = {}): { rollout: RolloutJson; report: ImportReport } {
  const records = readJsonLines(text, file);
  const t = createTranscript(CODEX, options);
  const { report } = t;
  const calls = new Map<string, number>();
  let sessionId: string | undefined;
  let cli: string | undefined;
  let model: string | undefined;

  const itemPieces = (item: unknown, line: number, what: string): Piece[] => {
    const where = (reason: string): never => failAt(file, line, `${what}: ${reason}`);
    if (!isObject(item)) return where(`expected an object, got ${quote(item)}`);
    return piecesOf(item, where, (type) => report.skipBlock(type));
  };

  const legacy = isLegacyMeta(records[0].value);
  for (const { line, value: raw } of records) {
    report.read();
    if (!isObject(raw)) failAt(file, line, `expected a Codex rollout record ({timestamp, type, payload}), got ${quote(raw)}`);
    // The older layout, read as the current one: its first line is the session's metadata, its state lines settings.
    let value = raw as Json;
    if (legacy) {
      if (line === records[0].line) value = { type: 'session_meta', payload: raw };
      else if ('record_type' in value && !('type' in value)) value = { type: 'turn_context', payload: raw };
      else value = { type: 'response_item', payload: raw };
    }
    const { type, payload } = value;
    if (typeof type !== 'string') failAt(file, line, `record "type" must be a string, got ${quote(type)}`);
    if (!isObject(payload)) failAt(file, line, `record "payload" must be an object, got ${quote(payload)}`);
    if (type === 'session_meta') {
      sessionId ??= typeof payload.id === 'string' ? payload.id : undefined;
      cli ??= typeof payload.cli_version === 'string' ? payload.cli_version : undefined;
      report.skip('session metadata (session_meta)', line);
    } else if (type === 'turn_context') {
      if (typeof payload.model === 'string') model = payload.model;
      report.skip('turn settings (turn_context)', line);
    } else if (type === 'event_msg') {
      report.skip(`not model context (event_msg${typeof payload.type === 'string' ? `/${payload.type}` : ''})`, line);
    } else if (type === 'response_item') {
      const itemType = payload.type;
      const callId = payload.call_id;
      if (typeof itemType === 'string' && CALL_TYPES.has(itemType) && callId !== undefined && callId !== null) {
        const id = needString(callId, `${itemType} call_id`, file, line);
        const earlier = calls.get(id);
        if (earlier !== undefined) failAt(file, line, `call_id ${quote(id)} is used by two calls (also on line ${earlier})`);
        calls.set(id, line);
      }
      if (typeof itemType === 'string' && OUTPUT_TYPES.has(itemType)) {
        const id = needString(callId, `${itemType} call_id`, file, line);
        if (!calls.has(id)) failAt(file, line, `${itemType} answers call_id ${quote(id)}, which no earlier call has`);
      }
      const pieces = itemPieces(payload, line, `response_item (${String(itemType)})`);
      for (const p of pieces) t.append(p.role, p.text, String(line));
      if (pieces.length) report.imported(line);
      else report.skip('left out of the context (no text the model read or wrote)', line);
    } else if (type === 'compacted') {
      const message = needString(payload.message ?? '', 'compacted message', file, line);
      let items: NewViewItem[];
      if (payload.replacement_history !== undefined && payload.replacement_history !== null) {
        if (!Array.isArray(payload.replacement_history))
          failAt(file, line, `compacted replacement_history must be a list of response items, got ${quote(payload.replacement_history)}`);
        items = (payload.replacement_history as unknown[]).flatMap((item, i) =>
          itemPieces(item, line, `replacement_history[${i}]`).map((p) => ({ role: p.role, text: p.text, key: `${line}.${i}` })),
        );
      } else {
        // Older rollouts record only the summary: the CLI rebuilt the view from the user's messages and it.
        items = t.rollout.live.filter((s) => s.role === 'prompt').map((s) => ({ role: 'prompt' as const, text: s.tag.text, key: s.tag.key }));
        if (message) items.push({ role: 'summary', text: message, key: String(line) });
      }
      if (t.rollout.live.length === 0) {
        for (const item of items) t.append(item.role === 'act' ? 'act' : item.role === 'obs' ? 'obs' : 'prompt', item.text, item.key);
        report.problem(line, 'compaction before any context: its view imported as the prompt');
        report.imported(line);
      } else if (t.replaceView(items, 'compaction')) report.imported(line);
      else {
        report.problem(line, 'compaction leaves the live view unchanged: no edit');
        report.skip('compaction that changes nothing', line);
      }
    } else failAt(file, line, `unknown record type ${quote(type)} (session_meta, turn_context, response_item, event_msg, compacted)`);
  }
  if (t.rollout.events === 0) failAt(file, undefined, 'no response_item with text: nothing the model read or wrote');
  return t.finish(sessionId ?? CODEX, { ...(sessionId ? { sessionId } : {}), ...(cli ? { cliVersion: cli } : {}), ...(model ? { model } : {}) });
}

/** The importer of its row in the format table (detect.ts `formats`). */
export const codexImporter: FileImporter = {
  name: CODEX,
  detect: (sample) => looksLikeCodex(sample),
  readText(text, file, options = {}) {
    const { rollout, report } = importCodexText(text, file, options);
    return { rollouts: [{ value: rollout }], report: { kind: 'records', report } };
  },
};
