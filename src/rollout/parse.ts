// Reading a rollout file of any known format: JSON or JSONL records, whole-file importers, then
// per-record `format` dispatch (native v1 or an importer), then validation. All or nothing: the
// first problem throws a ValidationError and no rollout of the file is returned. `loadRolloutFile`
// first loads the tokenizers the file needs (the import's, and those its records name).

import { ValidationError, quote } from './errors';
import { ROLLOUT_FORMAT } from './format';
import { detectFormat, isUnreadable, notAFormat, recordImporter, sampleText, type ImportedRollout } from './importers/detect';
import type { FileImporter, ImportOptions } from './importers/types';
import type { FileReport } from './importers/report';
import { readJsonRecords, stripBom, type FileLayout, type JsonRecord } from './records';
import type { Rollout } from './rollout';
import { loadTokenizers, tokenizerField } from './tokenizer';
import { validateRollout } from './validate';

export type { ImportOptions } from './importers/types';

export interface RolloutFile {
  /** How the text was read: one JSON document, or JSON lines. */
  layout: FileLayout;
  rollouts: Rollout[];
}

export interface ReadRolloutFile extends RolloutFile {
  /** What was read, skipped and not understood (`formatFileReport` prints it as `mw import` does). */
  report: FileReport;
}

/** A file as read before import: a whole-file importer's log, or JSON records. */
type Read = { importer: FileImporter; text: string } | { layout: FileLayout; records: JsonRecord[] };

function readFile(text: string, file: string): Read {
  text = stripBom(text);
  const { sample, document } = sampleText(text);
  const row = detectFormat(sample, file);
  if (row?.kind === 'file') return { importer: row.importer, text };
  if (isUnreadable(sample, file)) throw notAFormat({ file });
  // As readJsonRecords: a text that parses whole is one document unless the name says JSON lines.
  return document && !/\.jsonl$/i.test(file) ? { layout: 'json', records: [{ value: document.value }] } : readJsonRecords(text, file);
}

function importAndValidate(read: Read, file: string, options: ImportOptions): ReadRolloutFile {
  if ('importer' in read) {
    const { rollouts, report } = read.importer.readText(read.text, file, options);
    return { layout: 'jsonl', rollouts: validateAll(rollouts, file), report };
  }
  const imported = read.records.map((record) => importRecord(record.value, { file, line: record.line }, options));
  const rollouts = validateAll(imported, file);
  return { layout: read.layout, rollouts, report: { kind: 'core', rollouts: rollouts.length } };
}

/**
 * The file's rollouts and its import report. `options.tokenizer` is how imported text is tokenized
 * (chat, agent-session and calls logs; a v1 rollout names its own). Every tokenizer the file needs
 * must be loaded already: loadRolloutFile sees to that.
 */
export function readRolloutFile(text: string, file: string, options: ImportOptions = {}): ReadRolloutFile {
  return importAndValidate(readFile(text, file), file, options);
}

/** readRolloutFile once the tokenizers it needs are loaded: the import's, and any its records name. */
export async function loadRolloutFile(text: string, file: string, options: ImportOptions = {}): Promise<ReadRolloutFile> {
  await loadTokenizers([options.tokenizer]);
  const read = readFile(text, file);
  if ('records' in read) await loadTokenizers(read.records.map((r) => tokenizerField(r.value)));
  return importAndValidate(read, file, options);
}

/** One record of a JSON or JSONL file as a v1 rollout object: native, or imported by its `format`. */
export function importRecord(value: unknown, source: { file: string; line?: number }, options: ImportOptions = {}): ImportedRollout {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(source, `expected a rollout object, got ${quote(value)}`);
  }
  const obj = value as Record<string, unknown>;
  if (obj.format === ROLLOUT_FORMAT) return { value: obj as ImportedRollout['value'], line: source.line };
  const format = obj.format;
  const importer = typeof format === 'string' ? recordImporter(format) : undefined;
  if (importer) return { value: importer(obj, source, options), line: source.line };
  throw new ValidationError(source, format === undefined ? `missing "format" (expected "${ROLLOUT_FORMAT}")` : `unknown format ${quote(format)}`);
}

/** The message for a rollout id met twice in one file. */
export function duplicateIdReason(id: string, firstLine: number | undefined): string {
  return `id ${quote(id)} is not unique in its file${firstLine ? ` (also on line ${firstLine})` : ''}`;
}

/** Validates imported rollouts; ids must be unique in their file. */
function validateAll(imported: ImportedRollout[], file: string): Rollout[] {
  const seen = new Map<string, number | undefined>();
  return imported.map(({ value, line }) => {
    const rollout = validateRollout(value, { file, line });
    if (seen.has(rollout.id)) {
      const first = seen.get(rollout.id);
      throw new ValidationError({ file, line }, duplicateIdReason(rollout.id, first));
    }
    seen.set(rollout.id, line);
    return rollout;
  });
}

/** The rollouts of a file in file order, whatever importable format it is in. */
export function parseRolloutFile(text: string, file: string): Rollout[] {
  return readRolloutFile(text, file).rollouts;
}
