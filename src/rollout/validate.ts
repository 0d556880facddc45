// Validation of one `memorywalker.rollout/v1` object (docs/rollout-format.md) into a `Rollout`: every rule is
// checked in event order and the first violation throws a ValidationError; nothing half-built
// escapes. The live view is replayed as runs (live-view.ts), so edits cost their piece count.

import { ROLE_CODE, ROLLOUT_FORMAT, type AppendRole, type InsertRole, type Role } from './format';
import { ValidationError, quote, type SourceLocation } from './errors';
import { MAX_NESTING, nestsDeeperThan } from './nesting';
import { isObject, type Json } from './records';
import { applyEdit, emptyRuns, pushRun, type EditPiece, type Runs } from './live-view';
import { DEFAULT_TOKENIZER, getTokenizer } from './tokenizer';
import type { AppendEvent, EditEvent, Rollout, RolloutEvent, ViewPiece } from './rollout';

const KNOWN_TOP = new Set(['format', 'id', 'vocab', 'tokenizer', 'reward', 'group', 'meta', 'events']);
const APPEND_FIELDS = new Set(['op', 'role', 'tokens', 'text', 'logprobs']);
const EDIT_FIELDS = new Set(['op', 'view']);
const INSERT_FIELDS = new Set(['role', 'tokens', 'text']);
const APPEND_ROLES: readonly string[] = ['prompt', 'obs', 'act'] satisfies AppendRole[];
const INSERT_ROLES: readonly string[] = ['summary', 'obs', 'prompt'] satisfies InsertRole[];
/** The largest vocabulary a rollout may name (token ids below it). */
export const MAX_VOCAB = 2 ** 31 - 1;

/**
 * A first guess of the tape length from the events as given: token lists count their entries, a
 * text piece its UTF-16 length plus its marker (exact for ASCII under the byte tokenizer). The tape
 * starts at that capacity, so a long rollout is neither regrown nor copied to size at the end.
 */
function estimateLength(events: unknown[]): number {
  let n = 0;
  const piece = (p: unknown) => {
    if (!isObject(p)) return;
    if (Array.isArray(p.tokens)) n += p.tokens.length;
    else if (typeof p.text === 'string') n += p.text.length + 1;
  };
  for (const ev of events) {
    if (!isObject(ev)) continue;
    if (ev.op === 'append') piece(ev);
    else if (Array.isArray(ev.view)) for (const p of ev.view) if (isObject(p)) piece(p.insert);
  }
  return n;
}

/**
 * The physical tape. Token values go into a growable array whose untouched capacity costs no
 * resident memory (typed arrays start zeroed), so the first guess may be generous; the per-id
 * arrays that follow from the events (role, segment, target flag, logprob) are allocated once, at
 * the tape's exact length, from the events when all are read: a long tape is not held twice.
 */
function createTape(initialCapacity: number) {
  let capacity = Math.max(16, initialCapacity);
  let tokens = new Int32Array(capacity);
  let length = 0;
  /** Target ids as runs: first, count, first, count, ... */
  const targetRuns: number[] = [];
  return {
    get length() {
      return length;
    },
    /** Creates ids for `values`, returns the first id. */
    create(values: readonly number[]): number {
      if (length + values.length > capacity) {
        while (capacity < length + values.length) capacity = Math.ceil(capacity * 1.5);
        const grown = new Int32Array(capacity);
        grown.set(tokens.subarray(0, length));
        tokens = grown;
      }
      const first = length;
      for (let i = 0; i < values.length; i++) tokens[first + i] = values[i];
      length += values.length;
      return first;
    },
    markTargets(first: number, count: number) {
      if (count > 0) targetRuns.push(first, count);
    },
    /** The per-id arrays, from the validated events. */
    finish(events: readonly RolloutEvent[]) {
      const roles = new Uint8Array(length);
      const segments = new Int32Array(length);
      const isTarget = new Uint8Array(length);
      let logprobs: Float64Array | null = null;
      let segment = 0;
      for (const event of events) {
        if (event.op === 'append') {
          const { first, count } = event;
          roles.fill(ROLE_CODE[event.role], first, first + count);
          segments.fill(segment, first, first + count);
          if (event.logprobs) (logprobs ??= new Float64Array(length).fill(NaN)).set(event.logprobs, first);
          continue;
        }
        segment = event.edit;
        for (const piece of event.view) {
          if (!('insert' in piece)) continue;
          const { role, first, count } = piece.insert;
          roles.fill(ROLE_CODE[role], first, first + count);
          segments.fill(segment, first, first + count);
        }
      }
      let targetCount = 0;
      for (let r = 0; r < targetRuns.length; r += 2) {
        isTarget.fill(1, targetRuns[r], targetRuns[r] + targetRuns[r + 1]);
        targetCount += targetRuns[r + 1];
      }
      const targets = new Int32Array(targetCount);
      for (let r = 0, t = 0; r < targetRuns.length; r += 2) for (let i = 0; i < targetRuns[r + 1]; i++) targets[t++] = targetRuns[r] + i;
      // The token array of exactly the tape's length is handed over as it is (no second copy of a long tape).
      return { tokens: tokens.length === length ? tokens : tokens.slice(0, length), roles, segments, isTarget, logprobs, targets };
    },
  };
}

/** Validates one parsed JSON value as a v1 rollout; throws ValidationError naming `source`. */
export function validateRollout(value: unknown, source: SourceLocation): Rollout {
  const fail = (reason: string, event?: number): never => {
    throw new ValidationError({ ...source, event }, reason);
  };

  if (!isObject(value)) return fail('a rollout must be a JSON object');
  if (value.format !== ROLLOUT_FORMAT) return fail(`format must be "${ROLLOUT_FORMAT}", got ${quote(value.format)}`);
  const { id, vocab, tokenizer, reward, group, meta, events } = value;
  if (typeof id !== 'string' || id.length === 0) return fail(`id must be a non-empty string, got ${quote(id)}`);
  if (typeof vocab !== 'number' || !Number.isInteger(vocab) || vocab < 1 || vocab > MAX_VOCAB) {
    return fail(`vocab must be an integer in [1, ${MAX_VOCAB}], got ${quote(vocab)}`);
  }
  if (tokenizer !== undefined && typeof tokenizer !== 'string') return fail(`tokenizer must be a string, got ${quote(tokenizer)}`);
  if (reward !== undefined && (typeof reward !== 'number' || !Number.isFinite(reward))) {
    return fail(`reward must be a number, got ${quote(reward)}`);
  }
  if (group !== undefined && typeof group !== 'string') return fail(`group must be a string, got ${quote(group)}`);
  if (!Array.isArray(events)) return fail(`events must be an array, got ${quote(events)}`);
  // Kept fields are written back verbatim (mw import, the app's workers): their depth is bounded.
  for (const key of Object.keys(value)) {
    if ((key === 'meta' || !KNOWN_TOP.has(key)) && nestsDeeperThan(value[key])) {
      return fail(`${quote(key)} nests deeper than ${MAX_NESTING} levels`);
    }
  }
  const tokenizerName = tokenizer ?? DEFAULT_TOKENIZER;

  const tape = createTape(estimateLength(events));
  let view: Runs = emptyRuns();
  const out: RolloutEvent[] = [];
  let K = 0;

  /** The token values of a piece given as `tokens` or `text`, checked against vocab. */
  const pieceTokens = (piece: Json, role: Role, what: string, e: number): { values: number[]; text?: string; marker: number } => {
    const hasTokens = piece.tokens !== undefined;
    const hasText = piece.text !== undefined;
    if (hasTokens === hasText) return fail(`${what} needs exactly one of "tokens" or "text"`, e);
    if (hasText) {
      if (typeof piece.text !== 'string') return fail(`${what}: text must be a string, got ${quote(piece.text)}`, e);
      const tk = getTokenizer(tokenizerName);
      if (!tk) return fail(`${what}: text needs a known tokenizer; ${quote(tokenizerName)} is not one`, e);
      const values = tk.encodePiece(piece.text, role);
      for (const v of values) if (v >= vocab) fail(`${what}: text encodes to token ${v}, outside [0, ${vocab})`, e);
      return { values, text: piece.text, marker: tk.marker(role).length };
    }
    const tokens = piece.tokens;
    if (!Array.isArray(tokens)) return fail(`${what}: tokens must be an array of token ids, got ${quote(tokens)}`, e);
    if (tokens.length === 0) return fail(`${what}: tokens is empty`, e);
    for (let i = 0; i < tokens.length; i++) {
      const v = tokens[i];
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= vocab) {
        fail(`${what}: tokens[${i}] = ${quote(v)} is not a token id in [0, ${vocab})`, e);
      }
    }
    return { values: tokens as number[], marker: 0 };
  };

  const checkFields = (obj: Json, allowed: Set<string>, what: string, e: number) => {
    for (const key of Object.keys(obj)) if (!allowed.has(key)) fail(`unknown field ${quote(key)} in ${what}`, e);
  };

  for (let e = 0; e < events.length; e++) {
    const ev: unknown = events[e];
    if (!isObject(ev)) return fail(`an event must be an object, got ${quote(ev)}`, e);
    if (ev.op === 'append') {
      checkFields(ev, APPEND_FIELDS, 'append event', e);
      const role = ev.role;
      if (typeof role !== 'string' || !APPEND_ROLES.includes(role)) {
        return fail(`append role must be "prompt", "obs" or "act", got ${quote(role)}`, e);
      }
      const { values, text, marker } = pieceTokens(ev, role as AppendRole, 'append', e);
      const isAct = role === 'act';
      let logprobs: number[] | undefined;
      if (ev.logprobs !== undefined) {
        if (!isAct) return fail('logprobs are only allowed on act appends', e);
        if (!Array.isArray(ev.logprobs)) return fail(`logprobs must be an array of numbers, got ${quote(ev.logprobs)}`, e);
        if (ev.logprobs.length !== values.length) {
          return fail(`logprobs has ${ev.logprobs.length} entries for ${values.length} tokens`, e);
        }
        for (let i = 0; i < ev.logprobs.length; i++) {
          const lp = ev.logprobs[i];
          if (typeof lp !== 'number' || !Number.isFinite(lp) || lp > 0) {
            fail(`logprobs[${i}] = ${quote(lp)} is not a finite number <= 0`, e);
          }
        }
        logprobs = ev.logprobs as number[];
      }
      const livePrefix = view.length;
      const first = tape.create(values);
      if (isAct) {
        // A text piece's marker is never a target, but it does precede (and predict) the text.
        const firstTarget = marker;
        if (livePrefix + firstTarget === 0) fail(`target id ${first} has no token before it in its live view`, e);
        tape.markTargets(first + firstTarget, values.length - firstTarget);
      }
      pushRun(view, first, values.length);
      const event: AppendEvent = { op: 'append', role: role as AppendRole, first, count: values.length };
      if (text !== undefined) event.text = text;
      if (logprobs) event.logprobs = logprobs.slice();
      out.push(event);
    } else if (ev.op === 'edit') {
      checkFields(ev, EDIT_FIELDS, 'edit event', e);
      if (!Array.isArray(ev.view)) return fail(`edit view must be an array of pieces, got ${quote(ev.view)}`, e);
      K++;
      const pieces: EditPiece[] = [];
      const viewOut: ViewPiece[] = [];
      for (let p = 0; p < ev.view.length; p++) {
        const piece: unknown = ev.view[p];
        const what = `view[${p}]`;
        if (!isObject(piece)) return fail(`${what} must be {"keep": [a, b]} or {"insert": {...}}, got ${quote(piece)}`, e);
        const keys = Object.keys(piece);
        const unknown = keys.find((k) => k !== 'keep' && k !== 'insert');
        if (unknown !== undefined) return fail(`unknown field ${quote(unknown)} in ${what}`, e);
        if (keys.length !== 1) return fail(`${what} must have exactly one of "keep" or "insert"`, e);
        if (piece.keep !== undefined) {
          const range = piece.keep;
          if (!Array.isArray(range) || range.length !== 2 || !range.every((x) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0)) {
            return fail(`${what}: keep must be [a, b] with integers 0 <= a < b, got ${quote(range)}`, e);
          }
          const [a, b] = range as [number, number];
          if (a >= b) return fail(`${what}: keep [${a}, ${b}] is empty (needs a < b)`, e);
          pieces.push({ keep: [a, b] });
          viewOut.push({ keep: [a, b] });
        } else {
          const ins = piece.insert;
          if (!isObject(ins)) return fail(`${what}: insert must be an object, got ${quote(ins)}`, e);
          checkFields(ins, INSERT_FIELDS, `${what}.insert`, e);
          const role = ins.role;
          if (role === 'act') return fail(`${what}: insert may not have role "act" (inserted tokens are never targets)`, e);
          if (typeof role !== 'string' || !INSERT_ROLES.includes(role)) {
            return fail(`${what}: insert role must be "summary", "obs" or "prompt", got ${quote(role)}`, e);
          }
          const { values, text } = pieceTokens(ins, role as InsertRole, `${what}.insert`, e);
          const first = tape.create(values);
          pieces.push({ insert: { first, count: values.length } });
          const insert: { role: InsertRole; first: number; count: number; text?: string } = {
            role: role as InsertRole,
            first,
            count: values.length,
          };
          if (text !== undefined) insert.text = text;
          viewOut.push({ insert });
        }
      }
      const outcome = applyEdit(view, pieces);
      if (!outcome.ok) return fail(outcome.reason, e);
      view = outcome.result.view;
      const event: EditEvent = { op: 'edit', edit: K, view: viewOut };
      out.push(event);
    } else {
      return fail(ev.op === undefined ? 'event has no op' : `unknown op ${quote(ev.op)}`, e);
    }
  }

  // fromEntries defines own properties: a top-level "__proto__" stays a field (assignment would set the prototype).
  const extra: Record<string, unknown> = Object.fromEntries(Object.entries(value).filter(([key]) => !KNOWN_TOP.has(key)));
  const { logprobs: given, ...tapeArrays } = tape.finish(out);
  const length = tape.length;
  // Logprobs that the file did not give are NaN: that array is built when first read (never, for `mw tree`).
  let logprobs = given;
  const rollout: Rollout = {
    id,
    vocab,
    tokenizer: tokenizerName,
    tokenizerGiven: tokenizer !== undefined,
    extra,
    events: out,
    source: source.line === undefined ? { file: source.file } : { file: source.file, line: source.line },
    K,
    length,
    ...tapeArrays,
    get logprobs(): Float64Array {
      logprobs ??= new Float64Array(length).fill(NaN);
      return logprobs;
    },
    set logprobs(value: Float64Array) {
      logprobs = value;
    },
  };
  if (reward !== undefined) rollout.reward = reward;
  if (group !== undefined) rollout.group = group;
  if (meta !== undefined) rollout.meta = meta;
  return rollout;
}
