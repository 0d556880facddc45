// Reading a rollout file one rollout at a time: memory follows the largest rollout, not the file.
// The same formats and messages as parse.ts (JSON, JSONL, calls, chat, agent sessions), judged
// from the head of the file; the first problem throws a ValidationError, as there. The tokenizer a
// record names is loaded before the record is read (gpt2's ranks only when a gpt2 rollout comes).

import { ValidationError } from './errors';
import { chatRollouts, looksLikeChat } from './importers/chat';
import { looksLikeAgentSession, streamAgentSession } from './importers/agentSession';
import { readLines, type OpenSource } from './importers/lines';
import { looksLikeTurns, streamTurns } from './importers/turns';
import { transcriptImporters } from './importers/detect';
import type { EventJson, RolloutJson } from './format';
import { duplicateIdReason, importRecord, loadRolloutFile } from './parse';
import type { FileLayout } from './records';
import type { Rollout } from './rollout';
import { loadTokenizers, tokenizerField } from './tokenizer';
import { validateRollout } from './validate';

/** Records format detection looks at, and the text it reads past the first record to find them. */
const SAMPLE_RECORDS = 50;
const SAMPLE_CHARS = 256 * 1024;

/** How a file is read: a chat log, an agent-session log, JSON lines of records, or one JSON document. */
export type FileKind = 'chat' | 'agent-session' | 'turns' | 'jsonl' | 'document' | 'transcript';

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
  // Codex rollouts, Gemini recordings, one-line Gemini files and OpenHands trajectories (detect.ts).
  if (transcriptImporters.some((importer) => importer.detect(head.sample, file))) return 'transcript';
  if (looksLikeChat(head.sample)) return 'chat';
  if (looksLikeAgentSession(head.sample)) return 'agent-session';
  if (looksLikeTurns(head.sample)) return 'turns';
  if (/\.jsonl$/i.test(file)) return 'jsonl';
  // As readJsonRecords: one document unless the first line is JSON alone and more lines follow.
  return head.firstParses && head.moreLines ? 'jsonl' : 'document';
}

/** Checks that ids are unique in the file, one rollout at a time. */
function createIdCheck(file: string) {
  const seen = new Map<string, number | undefined>();
  return (rollout: Rollout, line: number | undefined) => {
    if (seen.has(rollout.id)) throw new ValidationError({ file, line }, duplicateIdReason(rollout.id, seen.get(rollout.id)));
    seen.set(rollout.id, line);
  };
}

async function* jsonlRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  const checkId = createIdCheck(file);
  let records = 0;
  for await (const { text, line } of readLines(open())) {
    const trimmed = text.trim();
    if (trimmed.length === 0) continue;
    records++;
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (error) {
      throw new ValidationError({ file, line }, `invalid JSON (${error instanceof Error ? error.message : String(error)})`);
    }
    await loadTokenizers([tokenizerField(value)]);
    const imported = importRecord(value, { file, line });
    const rollout = validateRollout(imported.value, { file, line });
    checkId(rollout, line);
    yield rollout;
  }
  if (records === 0) throw new ValidationError({ file }, 'file is empty');
}

async function* chatFileRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  const checkId = createIdCheck(file);
  for await (const value of chatRollouts(open, { file })) {
    const line = (value.meta as { line: number }).line;
    const rollout = validateRollout(value, { file, line });
    checkId(rollout, line);
    yield rollout;
  }
}

async function* sessionRollout(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  const events: EventJson[] = [];
  let fields: Omit<RolloutJson, 'events' | 'meta'> | undefined;
  const head = await streamAgentSession(open, (event) => events.push(event), { file, onStart: (f) => (fields = f) });
  yield validateRollout({ ...fields!, events, meta: head.meta } as RolloutJson, { file });
}

async function* turnsRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  // A trainer's turn dump, read twice line by line; each rollout is handed over as its trajectory
  // ends, and the reading waits until it is taken (so rollouts never pile up).
  let slot: { rollout: Rollout; taken: () => void } | null = null;
  let signal: (() => void) | null = null;
  let finished = false;
  let failure: unknown;
  const notify = () => {
    const s = signal;
    signal = null;
    s?.();
  };
  void streamTurns(open, file, ({ value, line }) =>
    new Promise<void>((taken) => {
      slot = { rollout: validateRollout(value, { file, line }), taken };
      notify();
    }),
  ).then(
    () => {
      finished = true;
      notify();
    },
    (error: unknown) => {
      failure = error;
      finished = true;
      notify();
    },
  );
  for (;;) {
    const s = slot as { rollout: Rollout; taken: () => void } | null;
    if (s) {
      slot = null;
      yield s.rollout;
      s.taken();
      continue;
    }
    if (finished) break;
    await new Promise<void>((resolve) => (signal = resolve));
  }
  if (failure !== undefined) throw failure;
}

async function* documentRollouts(open: OpenSource, file: string): AsyncGenerator<Rollout> {
  // One JSON document is one rollout (or a calls log): read whole, as parse.ts does.
  const lines: string[] = [];
  for await (const { text } of readLines(open())) lines.push(text);
  yield* (await loadRolloutFile(lines.join('\n'), file)).rollouts;
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
  // A transcript is read whole, as one document is (its importer is found again by parse.ts).
  const read = { chat: chatFileRollouts, 'agent-session': sessionRollout, turns: turnsRollouts, jsonl: jsonlRollouts, document: documentRollouts, transcript: documentRollouts }[kind];
  return { layout: kind === 'document' ? 'json' : 'jsonl', rollouts: () => read(open, file) };
}
