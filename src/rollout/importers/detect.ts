// The table of formats a rollout file may be in: name → what identifies it → how it is read. Native
// v1 records are validated directly; every other format is imported into v1 first (docs/importers.md).
// Adding a format is one row of `formats`. A file no row identifies is refused with one line that
// lists every row (`notAFormat`); `mw import --from X` on a file of another format names that format.

import { ValidationError, type SourceLocation } from '../errors';
import { ROLLOUT_FORMAT } from '../format';
import { isObject } from '../records';
import { agentSessionImporter } from './agentSession';
import { CALLS_FORMAT, importCalls } from './calls';
import { chatImporter } from './chat';
import { codexImporter } from './codex';
import { geminiImporter } from './gemini';
import { sampleRecords } from './lines';
import { openHandsImporter } from './openhands';
import { turnsImporter } from './turns';
import { verlImporter } from './verl';
import type { FileImporter, RecordImporter } from './types';

export type { FileImporter, ImportedRollout, RecordImporter } from './types';

/**
 * One format mw reads. `file`: a whole-file format (a log whose records together describe
 * rollouts), tried in table order on the first records of the file. `record`: records that carry
 * their own `"format": NAME` field, imported one by one (`importer` absent: native v1).
 */
export type FormatRow =
  | {
      kind: 'file';
      /** What `mw import --from` takes and the import report prints. */
      name: string;
      /** What identifies it, in a few words (the refusal and docs/importers.md print this). */
      identifiedBy: string;
      importer: FileImporter;
    }
  | { kind: 'record'; name: string; identifiedBy: string; format: string; importer?: RecordImporter };

/**
 * Every format mw reads, in the order detection tries them. The agent transcripts and verl's text
 * dump come first: their records name them unambiguously, and they are read whole and strictly.
 */
export const formats: FormatRow[] = [
  {
    kind: 'file',
    name: 'codex',
    identifiedBy: 'JSON lines {"timestamp", "type": session_meta/turn_context/response_item/event_msg/compacted, "payload"} (Codex CLI rollouts)',
    importer: codexImporter,
  },
  {
    kind: 'file',
    name: 'gemini',
    identifiedBy: '{"sessionId", "projectHash" or "startTime", "messages"} as one JSON document, or its metadata line then messages (Gemini CLI sessions)',
    importer: geminiImporter,
  },
  {
    kind: 'file',
    name: 'openhands',
    identifiedBy: 'a JSON list of events with numeric "id", "source" and "action" or "observation" (OpenHands trajectories)',
    importer: openHandsImporter,
  },
  {
    kind: 'file',
    name: 'verl',
    identifiedBy: 'JSON lines with text "input" and "output", numeric "step", and "score" or "gts" (verl rollout_data_dir dumps)',
    importer: verlImporter,
  },
  {
    kind: 'file',
    name: 'agent-session',
    identifiedBy: 'JSON lines with "type" user/assistant/system/summary and "uuid" or "sessionId" (Claude Code sessions)',
    importer: agentSessionImporter,
  },
  { kind: 'file', name: 'chat', identifiedBy: 'JSON lines, each {"messages": [{"role", "content"}, ...]}', importer: chatImporter },
  {
    kind: 'file',
    name: 'turns',
    identifiedBy: "JSON lines of token-id turns: prompt_ids with output_ids/response_ids/completion_ids (TRL, slime, SkyRL, verl), or SkyRL's column object",
    importer: turnsImporter,
  },
  { kind: 'record', name: 'calls', identifiedBy: `records with "format": "${CALLS_FORMAT}"`, format: CALLS_FORMAT, importer: importCalls },
  { kind: 'record', name: 'rollout', identifiedBy: `records with "format": "${ROLLOUT_FORMAT}"`, format: ROLLOUT_FORMAT },
];

/** The per-record importer for a record's `format` field; undefined for native v1 and for formats mw does not read. */
export function recordImporter(format: string): RecordImporter | undefined {
  const row = formats.find((r) => r.kind === 'record' && r.format === format);
  return row?.kind === 'record' ? row.importer : undefined;
}

/** Whether a record names a per-record format of the table (v1 or an importer's). */
function namesRecordFormat(value: unknown): boolean {
  const format = typeof value === 'object' && value !== null ? (value as { format?: unknown }).format : undefined;
  return typeof format === 'string' && formats.some((r) => r.kind === 'record' && r.format === format);
}

/**
 * The row that reads a file, judged from its first records (`sample`: the first lines that parse,
 * or `[document]` for a file that is one JSON document over many lines). undefined: no row does.
 */
export function detectFormat(sample: readonly unknown[], file: string): FormatRow | undefined {
  for (const row of formats) {
    if (row.kind === 'file' && row.importer.detect(sample, file)) return row;
  }
  const record = sample.find(namesRecordFormat) as { format: string } | undefined;
  return record ? formats.find((r) => r.kind === 'record' && r.format === record.format) : undefined;
}

/**
 * The first records of a whole text: `[document]` for a text that parses whole, else its first lines
 * that parse (JSON lines), or none when its first non-blank line does not (judged by the JSON reader).
 * The parsed document comes back too, so a large one is parsed once.
 */
export function sampleText(text: string): { sample: unknown[]; document?: { value: unknown } } {
  try {
    const value: unknown = JSON.parse(text);
    return { sample: [value], document: { value } };
  } catch {
    const sample = sampleRecords(text);
    const first = text.trimStart().split('\n', 1)[0];
    return { sample: sample.length > 0 && parses(first) ? sample : [] };
  }
}

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}

/** The formats mw reads and what identifies each, as the refusal lists them. */
export function formatList(): string {
  return formats.map((row) => `${row.name} (${row.identifiedBy})`).join('; ');
}

/** The one-line refusal of a file no row identifies. */
export function notAFormat(source: SourceLocation): ValidationError {
  return new ValidationError(source, `not a format mw reads; it reads: ${formatList()}`);
}

/**
 * Whether a sample gives a file no row reads: records parsed, none names a known `format`, and no
 * whole-file importer takes them. (A file with no parseable record is left to the JSON reader, whose
 * syntax errors name the line.)
 */
export function isUnreadable(sample: readonly unknown[], file: string): boolean {
  return sample.some(holdsObjects) && detectFormat(sample, file) === undefined && !sample.some(isV1Like);
}

/** Records worth judging: objects, or arrays of them (a bare number or string is left to the JSON reader's message). */
function holdsObjects(value: unknown): boolean {
  return isObject(value) || (Array.isArray(value) && value.some(isObject));
}

const V1_FIELDS = new Set(['format', 'id', 'vocab', 'tokenizer', 'events', 'meta']);

/**
 * A record that means to be v1 or calls (a `format` or `events` field, or only v1's own fields):
 * per-record validation names its problem (`missing "format"`, `unknown format`) better than a refusal.
 */
function isV1Like(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return 'format' in value || 'events' in value || (keys.length > 0 && keys.every((k) => V1_FIELDS.has(k)));
}

/**
 * The refusal of `--from NAME` on a file that another row identifies: it names the format the file
 * looks like. undefined when the sample is NAME's or no row's (NAME's importer then names the line it
 * cannot read).
 */
export function wrongFormat(name: string, sample: readonly unknown[], source: SourceLocation): ValidationError | undefined {
  const row = formats.find((r) => r.name === name);
  if (!row || !sample.some(holdsObjects)) return undefined;
  const looks = detectFormat(sample, source.file);
  if (!looks || looks.name === name) return undefined;
  return new ValidationError(source, `not ${name} (${row.identifiedBy}): it looks like ${looks.name} (${looks.identifiedBy})`);
}
