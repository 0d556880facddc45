// The registry of formats a rollout file may be in. Native v1 records are validated directly;
// every other format is imported into v1 first (docs/importers.md). Adding an importer is one line here.

import type { SourceLocation } from '../errors';
import type { RolloutJson } from '../format';
import { agentSessionImporter } from './agentSession';
import { CALLS_FORMAT, importCalls } from './calls';
import { chatImporter } from './chat';
import { sampleRecords } from './lines';
import { turnsImporter } from './turns';

/** Imports one JSON object (one record of the file) of a known `format` into a v1 rollout. */
export type RecordImporter = (value: Record<string, unknown>, source: SourceLocation) => RolloutJson;

/** A v1 rollout produced by an importer, with the line it came from (for error messages). */
export interface ImportedRollout {
  value: RolloutJson;
  line?: number;
}

/**
 * Reads a whole file whose records together describe rollouts (e.g. an agent session log). It reads
 * the text itself: such logs hold lines it reports and passes over (a cut or malformed record)
 * where a v1 file would be refused.
 */
export interface FileImporter {
  name: string;
  /** Whether this importer reads the file, judged from the first records that parse (and its name). */
  detect(sample: readonly unknown[], file: string): boolean;
  readText(text: string, file: string): ImportedRollout[];
}

/** Whole-file formats, tried in order before the per-record `format` dispatch. */
export const fileImporters: FileImporter[] = [agentSessionImporter, chatImporter, turnsImporter];

/** Per-record formats by their `format` field; `memorywalker.rollout/v1` needs no import. */
export const recordImporters: Readonly<Record<string, RecordImporter>> = {
  [CALLS_FORMAT]: importCalls,
};

export function findFileImporter(text: string, file: string): FileImporter | undefined {
  if (fileImporters.length === 0) return undefined;
  const sample = sampleRecords(text);
  return fileImporters.find((importer) => importer.detect(sample, file));
}
