// Splits a file's text into JSON records: one for a single JSON document, one per non-empty line
// for JSONL. Syntax errors become ValidationErrors (with the line for JSONL).

import { ValidationError } from './errors';

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

function parseJson(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: `invalid JSON (${error instanceof Error ? error.message : String(error)})` };
  }
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
    const whole = parseJson(text);
    if (whole.ok) return { layout: 'json', records: [{ value: whole.value }] };
    const firstLine = text.split('\n').find((l) => l.trim().length > 0) ?? '';
    if (firstLine.trim() === text.trim() || !parseJson(firstLine).ok) throw new ValidationError({ file }, whole.reason);
  }
  const records: JsonRecord[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line.length === 0) continue;
    const parsed = parseJson(line);
    if (!parsed.ok) throw new ValidationError({ file, line: i + 1 }, parsed.reason);
    records.push({ value: parsed.value, line: i + 1 });
  }
  if (records.length === 0) throw new ValidationError({ file }, 'file is empty');
  return { layout: 'jsonl', records };
}
