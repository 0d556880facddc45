// The registry of formats a rollout file may be in. Native v1 records are validated directly;
// every other format is imported into v1 first (docs/importers.md). Adding an importer is one line here.

import type { FileImporter, RecordImporter } from './types';
import { agentSessionImporter } from './agentSession';
import { CALLS_FORMAT, importCalls } from './calls';
import { chatImporter } from './chat';
import { sampleRecords } from './lines';
import { turnsImporter } from './turns';

export type { FileImporter, ImportedRollout, RecordImporter } from './types';

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
