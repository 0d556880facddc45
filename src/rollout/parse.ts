// Reading a rollout file of any known format: JSON or JSONL records, whole-file importers, then
// per-record `format` dispatch (native v1 or an importer), then validation. All or nothing: the
// first problem throws a ValidationError and no rollout of the file is returned.

import { ValidationError, quote } from './errors';
import { ROLLOUT_FORMAT } from './format';
import { findFileImporter, recordImporters, type ImportedRollout } from './importers/detect';
import type { FileReport } from './importers/report';
import { readJsonRecords, stripBom, type FileLayout } from './records';
import type { Rollout } from './rollout';
import { validateRollout } from './validate';

export interface RolloutFile {
  /** How the text was read: one JSON document, or JSON lines. */
  layout: FileLayout;
  rollouts: Rollout[];
}

export interface ReadRolloutFile extends RolloutFile {
  /** What was read, skipped and not understood (`formatFileReport` prints it as `mw import` does). */
  report: FileReport;
}

export function readRolloutFile(text: string, file: string): ReadRolloutFile {
  text = stripBom(text);
  const importer = findFileImporter(text, file);
  if (importer) {
    const { rollouts, report } = importer.readText(text, file);
    return { layout: 'jsonl', rollouts: validateAll(rollouts, file), report };
  }
  const { layout, records } = readJsonRecords(text, file);
  const imported = records.map((record) => importRecord(record.value, { file, line: record.line }));
  const rollouts = validateAll(imported, file);
  return { layout, rollouts, report: { kind: 'core', rollouts: rollouts.length } };
}

/** One record of a JSON or JSONL file as a v1 rollout object: native, or imported by its `format`. */
export function importRecord(value: unknown, source: { file: string; line?: number }): ImportedRollout {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(source, `expected a rollout object, got ${quote(value)}`);
  }
  const obj = value as Record<string, unknown>;
  if (obj.format === ROLLOUT_FORMAT) return { value: obj as ImportedRollout['value'], line: source.line };
  const format = obj.format;
  if (typeof format === 'string' && Object.hasOwn(recordImporters, format)) {
    return { value: recordImporters[format](obj, source), line: source.line };
  }
  throw new ValidationError(
    source,
    format === undefined ? `missing "format" (expected "${ROLLOUT_FORMAT}")` : `unknown format ${quote(format)}`,
  );
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
