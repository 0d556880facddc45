// The shapes every importer shares: a per-record importer (one JSON object of a known `format`) and
// a whole-file importer (a log whose records together describe rollouts). The registry is detect.ts.

import type { SourceLocation } from '../errors';
import type { RolloutJson } from '../format';
import type { TokenizerName } from '../tokenizer-types';
import type { OpenSource } from './lines';
import type { FileReport } from './report';

/** What a person chooses about an import (mw import's flags, the app's import choice). */
export interface ImportOptions {
  /** How text is tokenized (docs/tokenizers.md); default byte, or what a calls log names itself. Formats of token ids ignore it. */
  tokenizer?: TokenizerName;
}

/** Imports one JSON object (one record of the file) of a known `format` into a v1 rollout. */
export type RecordImporter = (value: Record<string, unknown>, source: SourceLocation, options?: ImportOptions) => RolloutJson;

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
  /** The file's rollouts, and what was read, skipped and not understood on the way. */
  readText(text: string, file: string, options?: ImportOptions): { rollouts: ImportedRollout[]; report: FileReport };
  /**
   * The same rollouts pulled one at a time from the file's bytes (`open` may be called more than once),
   * the report as the generator's return value. Absent: the file is read whole and given to readText.
   */
  rollouts?(open: OpenSource, file: string, options?: ImportOptions): AsyncGenerator<ImportedRollout, FileReport>;
}
