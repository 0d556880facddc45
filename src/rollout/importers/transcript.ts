// What the strict agent-transcript importers share (Codex CLI rollouts, Gemini CLI sessions, OpenHands
// trajectories): their records with the line each starts on, and a text rollout whose edits say "the
// live view is now this list of messages": a message still live with the same role and text keeps its
// ids, every other one is inserted as a summary. Bad input is one ValidationError naming file and line.

import { ValidationError, quote } from '../errors';
import { invalidJson, type Json, tryParseJson } from '../records';
import { ROLLOUT_FORMAT, type AppendRole, type EventJson, type InsertRole, type RolloutJson } from '../format';
import { byteTokenizer, getTokenizer } from '../tokenizer';
import type { ImportOptions } from './types';
import { createReportBuilder, type ImportReport, type ReportBuilder } from './report';
import { createTextRolloutBuilder, type Span, type TextRolloutBuilder, type ViewItem } from './textRollout';

/** The whole text as one JSON value (an error names the line where parsing stopped when it can). */
export function jsonDocument(text: string, file: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (!body.trim()) throw new ValidationError({ file }, 'file is empty');
  const parsed = tryParseJson(body);
  if (parsed.ok) return parsed.value;
  // The line where parsing stopped: at the position the message gives, else (a cut document) the last line.
  const at = /position (\d+)/.exec(parsed.message);
  const line = (at ? body.slice(0, Number(at[1])) : body.trimEnd()).split('\n').length;
  throw new ValidationError({ file, line }, invalidJson(parsed.message));
}

/**
 * The 1-based line on which each element of a JSON array starts: the document's own array, or (with
 * `key`) the array under that key of the root object. Strings are skipped with their escapes, so a
 * bracket inside a message does not count. Used to name the line of a bad record in a JSON document.
 */
export function elementLines(text: string, key?: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  // Depth at which the wanted array's elements stand (0: not open yet, -1: closed).
  let target = key === undefined ? 1 : 0;
  let expectElement = key === undefined;
  // In the root object (depth 1): whether a key comes next, and the last key read.
  let expectKey = false;
  let currentKey: string | null = null;
  const element = () => {
    if (depth !== target) return;
    if (expectElement) lines.push(line);
    expectElement = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) line++;
    else if (c === 32 || c === 9 || c === 13 || c === 0xfeff || c === 58) continue;
    else if (c === 34) {
      element();
      const from = i + 1;
      let j = from;
      for (; j < text.length; j++) {
        const d = text.charCodeAt(j);
        if (d === 92) j++;
        else if (d === 34) break;
        else if (d === 10) line++;
      }
      if (depth === 1 && expectKey) {
        currentKey = text.slice(from, j);
        expectKey = false;
      }
      i = j;
    } else if (c === 44) {
      if (depth === target) expectElement = true;
      if (depth === 1) expectKey = true;
    } else if (c === 91 || c === 123) {
      element();
      depth++;
      if (depth === 1 && c === 123) expectKey = true;
      if (c === 91 && target === 0 && depth === 2 && currentKey === key) {
        target = 2;
        expectElement = true;
      }
    } else if (c === 93 || c === 125) {
      if (depth === target && key !== undefined) target = -1;
      depth--;
    } else {
      element();
      while (i + 1 < text.length && !/[\s,\]}]/.test(text[i + 1])) i++;
    }
  }
  return lines;
}

/** A live piece's label: its text (what replacement views are matched by) and, for tool results, the call it answers. */
export interface PieceTag {
  text: string;
  /** The record (or event id) the piece came from. */
  key: string;
}

export interface NewViewItem {
  role: AppendRole | InsertRole;
  text: string;
  key: string;
}

export interface Transcript {
  readonly rollout: TextRolloutBuilder<PieceTag>;
  readonly report: ReportBuilder;
  readonly events: EventJson[];
  append(role: AppendRole, text: string, key: string): Span<PieceTag> | undefined;
  /**
   * The live view becomes `items` in order: each item whose role and text a live piece after the
   * previous match has keeps that piece, every other one is inserted as a summary. Returns whether
   * the view changed (an unchanged view is no edit).
   */
  replaceView(items: readonly NewViewItem[], kind: string): boolean;
  /** The v1 rollout, its report in `meta.import`. */
  finish(id: string, meta: Json): { rollout: RolloutJson; report: ImportReport };
}

export function createTranscript(format: string, options: ImportOptions = {}): Transcript {
  const tokenizer = options.tokenizer ? (getTokenizer(options.tokenizer) ?? byteTokenizer) : byteTokenizer;
  const events: EventJson[] = [];
  const rollout = createTextRolloutBuilder<PieceTag>((e) => events.push(e), tokenizer);
  const report = createReportBuilder(format);
  const matches = (span: Span<PieceTag>, item: NewViewItem) =>
    span.tag.text === item.text && (span.role === item.role || (span.inserted && item.role === 'summary'));
  return {
    rollout,
    report,
    events,
    append(role, text, key) {
      if (!text) return undefined;
      return rollout.append(role, text, { text, key });
    },
    replaceView(items, kind) {
      const live = rollout.live;
      const view: ViewItem<PieceTag>[] = [];
      let cursor = 0;
      for (const item of items) {
        if (!item.text) continue;
        let j = cursor;
        while (j < live.length && !matches(live[j], item)) j++;
        if (j < live.length) {
          view.push({ keep: live[j] });
          cursor = j + 1;
        } else view.push({ insert: { role: 'summary', text: item.text }, tag: { text: item.text, key: item.key } });
      }
      const changed = rollout.edit(view);
      if (changed) report.edit(kind);
      return changed;
    },
    finish(id, meta) {
      const done = report.finish({ rollouts: 1, events: rollout.events });
      const value = {
        format: ROLLOUT_FORMAT,
        id,
        vocab: tokenizer.vocab,
        tokenizer: tokenizer.name,
        events,
        meta: { source: format, ...meta, import: done },
      } as RolloutJson;
      return { rollout: value, report: done };
    },
  };
}

/** A failure at a line, as every strict importer raises it. */
export function failAt(file: string, line: number | undefined, reason: string): never {
  throw new ValidationError(line === undefined ? { file } : { file, line }, reason);
}

/** `what` must be a string (else the error names it and its value). */
export function needString(value: unknown, what: string, file: string, line: number | undefined): string {
  if (typeof value !== 'string') failAt(file, line, `${what} must be a string, got ${quote(value)}`);
  return value as string;
}

/** Arguments a model wrote as a JSON string, parsed when they are JSON (else kept as the string). */
export function parsedArguments(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}
