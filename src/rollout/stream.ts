// Reading a rollout file one rollout at a time: memory follows the largest rollout, not the file.
// The same formats and messages as parse.ts (every row of the format table, detect.ts), judged
// from the head of the file; the first problem throws a ValidationError, as there. The tokenizer a
// record names is loaded before the record is read (gpt2's ranks only when a gpt2 rollout comes).

import { ValidationError } from './errors';
import { detectFormat, isUnreadable, notAFormat, type FormatRow } from './importers/detect';
import { readLines, type Line, type OpenSource } from './importers/lines';
import type { FileImporter, ImportedRollout } from './importers/types';
import type { FileReport } from './importers/report';
import { duplicateIdReason, importRecord, loadRolloutFile } from './parse';
import type { ImportOptions } from './parse';
import { type FileLayout, parseJsonAt } from './records';
import type { Rollout } from './rollout';
import { loadTokenizers, tokenizerField } from './tokenizer';
import { validateRollout } from './validate';

/** Records format detection looks at, and the text it reads past the first record to find them. */
const SAMPLE_RECORDS = 50;
const SAMPLE_CHARS = 256 * 1024;

/** How a file is read: by a whole-file importer of the format table, as JSON lines of records, or as one JSON document. */
export type FileKind = { kind: 'file'; row: Extract<FormatRow, { kind: 'file' }> } | { kind: 'jsonl' } | { kind: 'document' };

export interface RolloutStream {
  layout: FileLayout;
  /** The file's rollouts in file order, validated one by one; each call reads the file again. */
  rollouts(): AsyncGenerator<Rollout>;
}

interface Head {
  /** The first records that parse (at least the first non-blank line, whatever its length). */
  sample: unknown[];
  /** Whether the first non-blank line is JSON by itself. */
  firstParses: boolean;
  /** Whether a second non-blank line exists. */
  moreLines: boolean;
  empty: boolean;
}

async function readHead(open: OpenSource): Promise<Head> {
  const head: Head = { sample: [], firstParses: false, moreLines: false, empty: true };
  let chars = 0;
  let seen = 0;
  for await (const { text } of readLines(open())) {
    if (!text.trim()) continue;
    seen++;
    if (seen === 2) head.moreLines = true;
    if (seen > 1) chars += text.length;
    try {
      head.sample.push(JSON.parse(text));
      if (seen === 1) head.firstParses = true;
    } catch {
      // a malformed or cut line says nothing about the format
    }
    if (head.sample.length >= SAMPLE_RECORDS || chars > SAMPLE_CHARS) break;
  }
  head.empty = seen === 0;
  return head;
}

function kindOf(head: Head, file: string): FileKind {
  // A file whose first line is not JSON by itself is one document (or broken): parse.ts judges it whole.
  const sample = head.firstParses ? head.sample : [];
  const row = detectFormat(sample, file);
  if (row?.kind === 'file') return { kind: 'file', row };
  if (isUnreadable(sample, file)) throw notAFormat({ file });
  if (/\.jsonl$/i.test(file)) return { kind: 'jsonl' };
  // As readJsonRecords: one document unless the first line is JSON alone and more lines follow.
  return { kind: head.firstParses && head.moreLines ? 'jsonl' : 'document' };
}

/** Checks that ids are unique in the file, one rollout at a time. */
function createIdCheck(file: string) {
  const seen = new Map<string, number | undefined>();
  return (rollout: Rollout, line: number | undefined) => {
    if (seen.has(rollout.id)) throw new ValidationError({ file, line }, duplicateIdReason(rollout.id, seen.get(rollout.id)));
    seen.set(rollout.id, line);
  };
}

/** A line's text, taken out of it: a long line is not kept (by the generator's frame) while its rollout is built and used. */
function takeText(entry: Line): string {
  const { text } = entry;
  entry.text = '';
  return text;
}

async function* jsonlRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  const checkId = createIdCheck(file);
  let records = 0;
  for await (const entry of readLines(open())) {
    const { line } = entry;
    if (entry.text.trim().length === 0) continue;
    records++;
    const value = parseJsonAt(takeText(entry).trim(), { file, line });
    await loadTokenizers([tokenizerField(value)]);
    const imported = importRecord(value, { file, line });
    const rollout = validateRollout(imported.value, { file, line });
    checkId(rollout, line);
    yield rollout;
  }
  if (records === 0) throw new ValidationError({ file }, 'file is empty');
}

/** A whole-file importer's rollouts one at a time: streamed where it can, else from the text read whole. */
export async function* importerRollouts(
  importer: FileImporter,
  open: OpenSource,
  file: string,
  options: ImportOptions = {},
): AsyncGenerator<ImportedRollout, FileReport> {
  if (importer.rollouts) return yield* importer.rollouts(open, file, options);
  const lines: string[] = [];
  for await (const { text } of readLines(open())) lines.push(text);
  // splice: the generator keeps its locals while it runs; the lines go once joined.
  const { rollouts, report } = importer.readText(lines.splice(0).join('\n'), file, options);
  yield* rollouts.splice(0);
  return report;
}

async function* importedRollouts(importer: FileImporter, open: OpenSource, file: string): AsyncGenerator<Rollout> {
  const checkId = createIdCheck(file);
  for await (const { value, line } of importerRollouts(importer, open, file)) {
    const rollout = validateRollout(value, { file, line });
    checkId(rollout, line);
    yield rollout;
  }
}

async function* documentRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  // One JSON document is one rollout (or a calls log): read whole, as parse.ts does.
  const lines: string[] = [];
  for await (const { text } of readLines(open())) lines.push(text);
  yield* (await loadRolloutFile(lines.join('\n'), file)).rollouts;
}

/** The first records of a file that parse (whole lines, however long): what detection judges. */
export async function sampleFile(open: OpenSource): Promise<unknown[]> {
  const head = await readHead(open);
  return head.firstParses ? head.sample : [];
}

/**
 * The file's kind, judged from its first records: whole lines, however long (a chat log whose first
 * conversation exceeds any fixed sniffing window is still a chat log).
 */
export async function detectFileKind(open: OpenSource, file: string): Promise<FileKind> {
  const head = await readHead(open);
  if (head.empty) throw new ValidationError({ file }, 'file is empty');
  return kindOf(head, file);
}

/** Opens a rollout file for reading one rollout at a time; `open` is called once per pass. */
export async function openRolloutStream(open: OpenSource, file: string): Promise<RolloutStream> {
  const kind = await detectFileKind(open, file);
  if (kind.kind === 'file') return { layout: 'jsonl', rollouts: () => importedRollouts(kind.row.importer, open, file) };
  return { layout: kind.kind === 'document' ? 'json' : 'jsonl', rollouts: () => (kind.kind === 'document' ? documentRollouts : jsonlRollouts)(open, file) };
}
