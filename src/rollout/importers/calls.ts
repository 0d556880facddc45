// Importer for `memorywalker.calls/v1` (docs/importers.md): a black-box harness's log of model calls, each
// an input view and an output. Views are aligned call to call: a common prefix is kept, earlier
// outputs that survive whole and reappear verbatim keep their ids, everything else new is inserted
// as `summary`. An output that an earlier edit cut in part is never matched again.

import { ValidationError, quote, type SourceLocation } from '../errors';
import { ROLLOUT_FORMAT, type EventJson, type RolloutJson, type ViewPieceJson } from '../format';
import { DEFAULT_TOKENIZER, getTokenizer, type TokenizerName } from '../tokenizer';

export const CALLS_FORMAT = 'memorywalker.calls/v1';

const CALL_FIELDS = new Set(['input', 'output', 'logprobs']);
const NOT_COPIED = new Set(['format', 'calls']);

export interface Call {
  input: number[];
  output: number[];
  logprobs?: number[];
}

/** The live view while importing: per position its id, token value and the call whose output it is (-1: not act). */
interface Live {
  ids: number[];
  values: number[];
  output: number[];
}

export interface CallsOptions {
  /** The tokenizer of the calls' text and ids (docs/tokenizers.md); the file's own `tokenizer` must agree. */
  tokenizer?: TokenizerName;
}

function readCalls(value: Record<string, unknown>, source: SourceLocation, tokenizerName: unknown): Call[] {
  const fail = (reason: string): never => {
    throw new ValidationError(source, reason);
  };
  const vocab = value.vocab;
  if (typeof vocab !== 'number' || !Number.isInteger(vocab) || vocab < 1) return fail(`vocab must be a positive integer, got ${quote(vocab)}`);
  if (!Array.isArray(value.calls)) return fail(`calls must be an array, got ${quote(value.calls)}`);
  const readTokens = (x: unknown, what: string): number[] => {
    if (typeof x === 'string') {
      const tk = typeof tokenizerName === 'string' ? getTokenizer(tokenizerName) : undefined;
      if (!tk) return fail(`${what}: text needs a known tokenizer; ${quote(tokenizerName)} is not one`);
      return tk.encode(x);
    }
    if (!Array.isArray(x)) return fail(`${what} must be an array of token ids or a string, got ${quote(x)}`);
    x.forEach((v, i) => {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= vocab) {
        fail(`${what}[${i}] = ${quote(v)} is not a token id in [0, ${vocab})`);
      }
    });
    return x as number[];
  };
  return value.calls.map((call: unknown, i): Call => {
    const what = `calls[${i}]`;
    if (typeof call !== 'object' || call === null || Array.isArray(call)) return fail(`${what} must be an object`);
    const c = call as Record<string, unknown>;
    const unknown = Object.keys(c).find((k) => !CALL_FIELDS.has(k));
    if (unknown !== undefined) return fail(`unknown field ${quote(unknown)} in ${what}`);
    const input = readTokens(c.input, `${what}.input`);
    const output = readTokens(c.output, `${what}.output`);
    if (input.length === 0 && output.length > 0) return fail(`${what}: the output has no token before it (empty input)`);
    if (c.logprobs === undefined) return { input, output };
    const lp = c.logprobs;
    if (!Array.isArray(lp) || lp.length !== output.length) {
      return fail(`${what}.logprobs must have one number per output token (${output.length})`);
    }
    lp.forEach((v, j) => {
      if (typeof v !== 'number' || !Number.isFinite(v) || v > 0) fail(`${what}.logprobs[${j}] = ${quote(v)} is not a finite number <= 0`);
    });
    return { input, output, logprobs: lp as number[] };
  });
}

/** Keep pieces for a list of ids: one piece per run of consecutive ids. */
function keepPieces(ids: readonly number[], into: ViewPieceJson[]): void {
  for (const id of ids) {
    const last = into[into.length - 1];
    if (last && 'keep' in last && last.keep[1] === id) last.keep[1] = id + 1;
    else into.push({ keep: [id, id + 1] });
  }
}

/** Earliest start q >= from with haystack[q .. q + needle.length) equal to needle, or -1. */
function findRun(haystack: readonly number[], needle: readonly number[], from: number): number {
  outer: for (let q = from; q + needle.length <= haystack.length; q++) {
    for (let j = 0; j < needle.length; j++) if (haystack[q + j] !== needle[j]) continue outer;
    return q;
  }
  return -1;
}

/**
 * The alignment rule (docs/importers.md) one call at a time: events are pushed to `events` as calls
 * arrive, and only the live view and each call's output length are kept, so a trainer's trajectory can
 * be aligned while its turns stream in.
 */
export function createCallsAligner() {
  const events: EventJson[] = [];
  let live: Live = { ids: [], values: [], output: [] };
  let nextId = 0;
  const outputLengths: number[] = [];
  const create = (into: Live, values: readonly number[], output: number) => {
    for (const v of values) {
      into.ids.push(nextId++);
      into.values.push(v);
      into.output.push(output);
    }
  };
  const add = (call: Call) => {
    const c = outputLengths.length;
    outputLengths.push(call.output.length);
    if (c === 0) {
      if (call.input.length) events.push({ op: 'append', role: 'prompt', tokens: call.input.slice() });
      create(live, call.input, -1);
    } else {
      const { input } = call;
      let p = 0;
      while (p < input.length && p < live.values.length && input[p] === live.values[p]) p++;
      if (p === live.values.length) {
        const rest = input.slice(p);
        if (rest.length) events.push({ op: 'append', role: 'obs', tokens: rest });
        create(live, rest, -1);
      } else {
        const view: ViewPieceJson[] = [];
        const next: Live = { ids: live.ids.slice(0, p), values: live.values.slice(0, p), output: live.output.slice(0, p) };
        keepPieces(next.ids, view);
        const insert = (from: number, to: number) => {
          if (to <= from) return;
          const tokens = input.slice(from, to);
          view.push({ insert: { role: 'summary', tokens } });
          create(next, tokens, -1);
        };
        // Earlier outputs lying wholly after p, in live order: every token of the call's output must
        // still stand there (one straddling p, or one an earlier edit cut in part, is not whole).
        let cursor = p;
        let at = p;
        while (at < live.values.length) {
          const owner = live.output[at];
          let end = at + 1;
          while (end < live.values.length && live.output[end] === owner) end++;
          const whole = owner >= 0 && end - at === outputLengths[owner] && !(at === p && p > 0 && live.output[p - 1] === owner);
          if (whole) {
            const run = live.values.slice(at, end);
            const q = findRun(input, run, cursor);
            if (q >= 0) {
              insert(cursor, q);
              keepPieces(live.ids.slice(at, end), view);
              // Loops, not push(...): a surviving output may be longer than a call's argument list.
              for (let k = at; k < end; k++) {
                next.ids.push(live.ids[k]);
                next.values.push(live.values[k]);
                next.output.push(live.output[k]);
              }
              cursor = q + run.length;
            }
          }
          at = end;
        }
        insert(cursor, input.length);
        events.push({ op: 'edit', view });
        live = next;
      }
    }
    if (call.output.length) {
      const event: EventJson = { op: 'append', role: 'act', tokens: call.output.slice() };
      if (call.logprobs) event.logprobs = call.logprobs.slice();
      events.push(event);
      create(live, call.output, c);
    }
  };
  return { events, add };
}

export function importCalls(value: Record<string, unknown>, source: SourceLocation, options: CallsOptions = {}): RolloutJson {
  if (options.tokenizer !== undefined && value.tokenizer !== undefined && value.tokenizer !== options.tokenizer) {
    throw new ValidationError(source, `the file's tokenizer is ${quote(value.tokenizer)}, the import asks for ${quote(options.tokenizer)}`);
  }
  const tokenizerName = options.tokenizer ?? value.tokenizer ?? DEFAULT_TOKENIZER;
  const calls = readCalls(value, source, tokenizerName);
  const aligner = createCallsAligner();
  for (const call of calls) aligner.add(call);
  const { events } = aligner;

  // Header fields pass through (reward, group, meta, unknown ones); events come last.
  const header: Record<string, unknown> = { format: ROLLOUT_FORMAT, id: value.id, vocab: value.vocab };
  if (options.tokenizer !== undefined) header.tokenizer = options.tokenizer;
  for (const key of Object.keys(value)) if (!NOT_COPIED.has(key) && !Object.hasOwn(header, key)) header[key] = value[key];
  return { ...header, events } as RolloutJson;
}
