// The playground's rollout as plain data: a rollout v1 (docs/rollout-format.md) a student builds by
// typing pieces and making edits on its live view. Every change is a pure function from one rollout
// to the next, checked by the validator; a change the format cannot express is refused with the
// reason, in words. Typed text is encoded here and written as `tokens` (no role markers), so the ids
// a student sees are the words they typed.
import {
  getTokenizer,
  validateRollout,
  type AppendEventJson,
  type AppendRole,
  type EventJson,
  type RolloutJson,
  type Tokenizer,
  type ViewPieceJson,
} from '../../rollout';

export const PLAYGROUND_ID = 'playground';

/** The tokenizers the playground encodes typed text with. */
export type PlayTokenizer = 'gpt2' | 'byte';

export type PlayOutcome = { ok: true; rollout: RolloutJson } | { ok: false; reason: string };

/** Positions [from, to] (inclusive) in the live view, in live order. */
export interface LiveSpan {
  from: number;
  to: number;
}

export function emptyRollout(tokenizer: PlayTokenizer): RolloutJson {
  const vocab = getTokenizerVocab(tokenizer);
  return { format: 'memorywalker.rollout/v1', id: PLAYGROUND_ID, vocab, tokenizer, events: [] };
}

function getTokenizerVocab(name: PlayTokenizer): number {
  return name === 'gpt2' ? 50257 : 272;
}

/** The live view at the end of the rollout (its ids in order), replayed from the events. */
export function liveIds(rollout: RolloutJson): number[] {
  let live: number[] = [];
  let next = 0;
  for (const e of rollout.events) {
    if (e.op === 'append') {
      const n = pieceLength(rollout, e);
      for (let i = 0; i < n; i++) live.push(next++);
    } else {
      const view: number[] = [];
      for (const p of e.view) {
        if ('keep' in p) for (let id = p.keep[0]; id < p.keep[1]; id++) view.push(id);
        else {
          const n = pieceLength(rollout, p.insert);
          for (let i = 0; i < n; i++) view.push(next++);
        }
      }
      live = view;
    }
  }
  return live;
}

function pieceLength(rollout: RolloutJson, piece: { tokens?: number[]; text?: string; role: string }): number {
  if (piece.tokens) return piece.tokens.length;
  const tokenizer = getTokenizer(rollout.tokenizer ?? 'byte');
  if (!tokenizer) throw new Error(`the ${rollout.tokenizer} tokenizer cannot count a text piece`);
  return tokenizer.encodePiece(piece.text ?? '', piece.role as AppendRole).length;
}

/** Physical ids and their roles' append event: the event index that created each appended id (-1 for inserted ids). */
export function appendEventOf(rollout: RolloutJson): { event: number; role: string }[] {
  const out: { event: number; role: string }[] = [];
  for (const [index, e] of rollout.events.entries()) {
    if (e.op === 'append') for (let i = 0; i < pieceLength(rollout, e); i++) out.push({ event: index, role: e.role });
    else for (const p of e.view) if ('insert' in p) for (let i = 0; i < pieceLength(rollout, p.insert); i++) out.push({ event: index, role: p.insert.role });
  }
  return out;
}

/** The tokenizer typed text is encoded with, or why there is none (a rollout of a folder's own tokenizer). */
export function playTokenizer(rollout: RolloutJson): Tokenizer | string {
  const name = rollout.tokenizer ?? 'byte';
  if (name !== 'byte' && name !== 'gpt2') return `typed text needs the byte or GPT-2 tokenizer; this rollout's is ${name}`;
  try {
    const tokenizer = getTokenizer(name);
    return tokenizer ?? `the ${name} tokenizer is not available`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The tokens of typed text. GPT-2 reads a word with the space before it, so a piece that follows
 * others and starts without a space gets one (" tests", as in running text); bytes are taken as typed.
 */
export function encodeTyped(rollout: RolloutJson, text: string): number[] | string {
  const tokenizer = playTokenizer(rollout);
  if (typeof tokenizer === 'string') return tokenizer;
  if (text.trim() === '') return 'type some text first';
  const spaced = tokenizer.name === 'gpt2' && rollout.events.length > 0 && !/^\s/.test(text) ? ` ${text}` : text;
  return tokenizer.encode(spaced);
}

/** The next rollout if the validator accepts it, else its message without the file and event prefix. */
function checked(rollout: RolloutJson): PlayOutcome {
  try {
    validateRollout(rollout, { file: 'playground' });
    return { ok: true, rollout };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, reason: message.replace(/^playground(?::\d+)?: (?:rollout "[^"]*": )?(?:event \d+: )?/, '') };
  }
}

function withEvent(rollout: RolloutJson, event: EventJson): RolloutJson {
  return { ...rollout, events: [...rollout.events, event] };
}

/** Appends typed text as a prompt, an observation or an action (an action's tokens carry the loss). */
export function appendPiece(rollout: RolloutJson, role: AppendRole, text: string): PlayOutcome {
  const tokens = encodeTyped(rollout, text);
  if (typeof tokens === 'string') return { ok: false, reason: tokens };
  return checked(withEvent(rollout, { op: 'append', role, tokens }));
}

/** Keep pieces for live ids, in live order: each run of consecutive ids one `keep`. */
function keeps(ids: readonly number[]): ViewPieceJson[] {
  const pieces: ViewPieceJson[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i + 1;
    while (j < ids.length && ids[j] === ids[j - 1] + 1) j++;
    pieces.push({ keep: [ids[i], ids[j - 1] + 1] });
    i = j;
  }
  return pieces;
}

function spanProblem(live: readonly number[], span: LiveSpan | null): string | null {
  if (!span) return 'select the tokens first: click one in the context, shift-click another to extend';
  if (span.from < 0 || span.to >= live.length || span.from > span.to) return 'the selection is not in the context any more';
  return null;
}

/** Evicts the selected live tokens: an edit that keeps every other live token. */
export function evictSpan(rollout: RolloutJson, span: LiveSpan | null): PlayOutcome {
  const live = liveIds(rollout);
  const problem = spanProblem(live, span);
  if (problem) return { ok: false, reason: problem };
  const { from, to } = span!;
  if (from === 0 && to === live.length - 1) return { ok: false, reason: 'evicting every token would leave the context empty: keep at least one' };
  return checked(withEvent(rollout, { op: 'edit', view: keeps([...live.slice(0, from), ...live.slice(to + 1)]) }));
}

/** Replaces the selected live tokens by a typed summary, where they stood (a compaction). */
export function summarizeSpan(rollout: RolloutJson, span: LiveSpan | null, text: string): PlayOutcome {
  const live = liveIds(rollout);
  const problem = spanProblem(live, span);
  if (problem) return { ok: false, reason: problem };
  const tokens = encodeTyped(rollout, text);
  if (typeof tokens === 'string') return { ok: false, reason: tokens === 'type some text first' ? 'type the summary first' : tokens };
  const { from, to } = span!;
  const view = [...keeps(live.slice(0, from)), { insert: { role: 'summary' as const, tokens } }, ...keeps(live.slice(to + 1))];
  return checked(withEvent(rollout, { op: 'edit', view }));
}

/** Slides the window: keeps only the last `n` live tokens. */
export function slideWindow(rollout: RolloutJson, n: number): PlayOutcome {
  const live = liveIds(rollout);
  if (!Number.isInteger(n) || n < 1) return { ok: false, reason: 'the window keeps a whole number of tokens, at least 1' };
  if (n >= live.length) return { ok: false, reason: `the context holds ${live.length} tokens: a window of ${n} would evict nothing` };
  return checked(withEvent(rollout, { op: 'edit', view: keeps(live.slice(live.length - n)) }));
}

/** Folds the latest observation still in the context into a typed summary (AgentFold's fold). */
export function foldLatestObservation(rollout: RolloutJson, text: string): PlayOutcome {
  const live = liveIds(rollout);
  const origin = appendEventOf(rollout);
  let last = -1;
  for (let p = live.length - 1; p >= 0 && last < 0; p--) {
    const o = origin[live[p]];
    if (o.role === 'obs' && rollout.events[o.event].op === 'append') last = o.event;
  }
  if (last < 0) return { ok: false, reason: 'no observation is left in the context to fold' };
  const positions = live.map((id, p) => (origin[id].event === last ? p : -1)).filter((p) => p >= 0);
  return summarizeSpan(rollout, { from: positions[0], to: positions[positions.length - 1] }, text);
}

/** Whether an appended piece carries the loss: an action does (its tokens are targets), a prompt or observation does not. */
export function setCarriesLoss(rollout: RolloutJson, event: number, carries: boolean): PlayOutcome {
  const e = rollout.events[event];
  if (e?.op !== 'append') return { ok: false, reason: 'only an appended piece can carry the loss' };
  if (e.role === 'prompt' && carries) return { ok: false, reason: 'a prompt is the task, not the policy’s output: append the text as an action instead' };
  const role: AppendRole = carries ? 'act' : 'obs';
  if (e.role === role) return { ok: true, rollout };
  const { logprobs: _dropped, ...rest } = e;
  const next: AppendEventJson = { ...rest, role } as AppendEventJson;
  return checked({ ...rollout, events: rollout.events.map((x, i) => (i === event ? next : x)) });
}

/** One line per event, in words: what a student reads back (prompt, action, observation, edit k). */
export function describeEvents(rollout: RolloutJson, decode: (tokens: number[]) => string): string[] {
  let k = 0;
  let next = 0;
  const live0: number[] = [];
  let live = live0;
  const words: Record<string, string> = { prompt: 'prompt', obs: 'observation', act: 'action', summary: 'summary' };
  const range = (ids: number[]) => ranges(ids);
  return rollout.events.map((e) => {
    if (e.op === 'append') {
      const n = pieceLength(rollout, e);
      const first = next;
      for (let i = 0; i < n; i++) live.push(next++);
      return `${words[e.role]} (ids ${first}–${next - 1}): ${e.tokens ? decode(e.tokens) : e.text}`;
    }
    k++;
    const view: number[] = [];
    const inserted: string[] = [];
    for (const p of e.view) {
      if ('keep' in p) for (let id = p.keep[0]; id < p.keep[1]; id++) view.push(id);
      else {
        const n = pieceLength(rollout, p.insert);
        const first = next;
        for (let i = 0; i < n; i++) view.push(next++);
        inserted.push(`${words[p.insert.role]} (ids ${first}–${next - 1}): ${p.insert.tokens ? decode(p.insert.tokens) : p.insert.text}`);
      }
    }
    const kept = new Set(view);
    const evicted = live.filter((id) => !kept.has(id));
    live = view;
    return `edit ${k}: evicts ${evicted.length ? range(evicted) : 'nothing'}${inserted.length ? `; inserts ${inserted.join('; ')}` : ''}`;
  });
}

/** Ids as ranges: 2–6, 11, 13–14. */
export function ranges(ids: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i + 1;
    while (j < ids.length && ids[j] === ids[j - 1] + 1) j++;
    out.push(j - i === 1 ? `${ids[i]}` : `${ids[i]}–${ids[j - 1]}`);
    i = j;
  }
  return out.join(', ');
}
