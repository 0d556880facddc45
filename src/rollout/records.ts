// Splits a file's text into JSON records: one for a single JSON document, one per non-empty line
// for JSONL. Syntax errors become ValidationErrors (with the line for JSONL).

import { type SourceLocation, ValidationError } from './errors';

/** A parsed JSON object: not an array, not null. */
export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface JsonRecord {
  value: unknown;
  /** 1-based line for JSONL records. */
  line?: number;
}

export type FileLayout = 'json' | 'jsonl';

export interface JsonRecords {
  layout: FileLayout;
  records: JsonRecord[];
}

/** A text's JSON value, or JSON.parse's message for why it is not JSON (lenient readers report that line and go on). */
export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/** How every reader words a syntax error: `invalid JSON (JSON.parse's message)`. */
export const invalidJson = (message: string) => `invalid JSON (${message})`;

/** A record's JSON value; a syntax error is a ValidationError at `source`. */
export function parseJsonAt(text: string, source: SourceLocation): unknown {
  const parsed = tryParseJson(text);
  if (!parsed.ok) throw new ValidationError(source, invalidJson(parsed.message));
  return parsed.value;
}

/** The text without a leading UTF-8 byte order mark, which every reader ignores (editors on Windows write one). */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * A leading byte order mark is ignored. A `.jsonl` name means JSON lines. Otherwise a text that parses whole is one document, and one
 * that does not but whose first non-empty line parses alone is read as JSON lines.
 */
export function readJsonRecords(text: string, file: string): JsonRecords {
  text = stripBom(text);
  if (text.trim().length === 0) throw new ValidationError({ file }, 'file is empty');
  if (!/\.jsonl$/i.test(file)) {
    const whole = tryParseJson(text);
    if (whole.ok) return { layout: 'json', records: [{ value: whole.value }] };
    const firstLine = text.split('\n').find((l) => l.trim().length > 0) ?? '';
    if (firstLine.trim() === text.trim() || !tryParseJson(firstLine).ok) throw new ValidationError({ file }, invalidJson(whole.message));
  }
  return { layout: 'jsonl', records: readJsonLines(text, file) };
}

/**
 * Every non-blank line of a JSONL text, parsed (a leading byte order mark dropped); a line that is
 * not JSON, a cut last line too, is a ValidationError naming it.
 */
export function readJsonLines(text: string, file: string): { value: unknown; line: number }[] {
  const records: { value: unknown; line: number }[] = [];
  const lines = stripBom(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    records.push({ value: parseJsonAt(line, { file, line: i + 1 }), line: i + 1 });
  }
  if (records.length === 0) throw new ValidationError({ file }, 'file is empty');
  return records;
}
