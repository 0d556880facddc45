// The registry of formats a rollout file may be in. Native v1 records are validated directly;
// every other format is imported into v1 first (docs/importers.md). Adding an importer is one line here.

import type { FileImporter, RecordImporter } from './types';
import { agentSessionImporter } from './agentSession';
import { CALLS_FORMAT, importCalls } from './calls';
import { chatImporter } from './chat';
import { codexImporter } from './codex';
import { geminiImporter } from './gemini';
import { openHandsImporter } from './openhands';
import { sampleRecords } from './lines';
import { turnsImporter } from './turns';
import { verlImporter } from './verl';

export type { FileImporter, ImportedRollout, RecordImporter } from './types';

/** Agent transcripts and verl's text dump, read whole and strictly (docs/importers.md): their records name them unambiguously. */
export const transcriptImporters: FileImporter[] = [codexImporter, geminiImporter, openHandsImporter, verlImporter];

/** Whole-file formats, tried in order before the per-record `format` dispatch. */
export const fileImporters: FileImporter[] = [...transcriptImporters, agentSessionImporter, chatImporter, turnsImporter];

/** Keys that open a pretty-printed document of an imported format (a Gemini session, an OpenHands trajectory, SkyRL columns). */
const DOCUMENT_KEYS = /"(sessionId|observation|action|prompt_token_ids|response_ids|history)"\s*:/;

/** Per-record formats by their `format` field; `memorywalker.rollout/v1` needs no import. */
export const recordImporters: Readonly<Record<string, RecordImporter>> = {
  [CALLS_FORMAT]: importCalls,
};

export function findFileImporter(text: string, file: string): FileImporter | undefined {
  if (fileImporters.length === 0) return undefined;
  const sample = sampleRecords(text);
  const found = fileImporters.find((importer) => importer.detect(sample, file));
  if (found) return found;
  // A pretty-printed document has no line that parses alone: judge it whole when its head names a document format.
  const head = text.slice(0, 65536).trimStart();
  if ((head.startsWith('{') || head.startsWith('[')) && DOCUMENT_KEYS.test(head)) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return undefined;
    }
    return fileImporters.find((importer) => importer.detect([doc], file));
  }
  return undefined;
}
