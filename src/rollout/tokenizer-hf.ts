// The `hf:<name>` tokenizers (docs/tokenizers.md): a model folder's own tokenizer.json through
// @huggingface/tokenizers and its chat template through @huggingface/jinja. A chat transcript is rendered
// whole by the template and cut at the messages' boundaries (renderChatEvents), or, where the template
// writes earlier turns differently once later messages follow, read with those edits (chatTapeEvents); a `text` piece (agent
// sessions, edits' inserts) is wrapped as the template wraps one message of its role. Rollouts are written
// with token ids (materializeEvent), so reading or scoring them never needs the tokenizer.json again.

import { Template } from '@huggingface/jinja';
import { Tokenizer as HfTokenizerModel } from '@huggingface/tokenizers';
import type { AppendRole, EventJson, InsertRole, Role, ViewPieceJson } from './format';
import { isObject, type Json } from './records';
import type { Tokenizer } from './tokenizer-types';
import { visibleText } from './token-text';

const HF_TOKENIZER_PREFIX = 'hf:';

/** A tokenizer.json (parsed), with what tokenizer_config.json and the model folder add to it. */
export interface HfTokenizerFiles {
  /** The model's name: the rollout records `hf:<name>`. */
  name: string;
  tokenizer: unknown;
  tokenizerConfig?: unknown;
  /** A `chat_template.jinja` beside tokenizer_config.json, which newer folders keep apart. */
  chatTemplate?: string | null;
  /** The model's vocabulary (config.json `vocab_size`), at least the tokenizer's; default the tokenizer's. */
  vocab?: number;
}

/** One chat message as the templates take it (OpenAI-style: role, content, tool_calls, tool_call_id, name). */
export type ChatMessage = Record<string, unknown> & { role: string };

export interface HfTokenizer extends Tokenizer {
  /** The template text, or null when the folder has none (text pieces are then plain text). */
  readonly chatTemplate: string | null;
  /** The template's rendering of a conversation, as @huggingface/jinja renders it. */
  renderChat(messages: readonly ChatMessage[], options?: { tools?: unknown; addGenerationPrompt?: boolean }): string;
  /**
   * A conversation as token appends: each message's share of the whole rendering, tokenized on its own;
   * an assistant message's header (the template's generation prompt) as a `prompt` append, its content,
   * tool calls and end marker as `act`.
   */
  renderChatEvents(messages: readonly ChatMessage[], tools?: unknown): EventJson[];
}

/** A token given as a string or as an AddedToken object ({content}). */
const tokenString = (v: unknown): string | undefined => (typeof v === 'string' ? v : isObject(v) && typeof v.content === 'string' ? v.content : undefined);

function templateOf(config: Json, file: string | null | undefined): string | null {
  if (file) return file;
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  // Older folders list named templates; the default one is what apply_chat_template uses.
  if (Array.isArray(t)) {
    const named = t.find((x) => isObject(x) && x.name === 'default') ?? t[0];
    if (isObject(named) && typeof named.template === 'string') return named.template;
  }
  return null;
}

/** GPT-2's byte ↔ character table, which ByteLevel tokenizers spell their pieces in. */
function byteDecoder(): Map<string, number> {
  const printable = new Set<number>();
  for (const [a, b] of [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ])
    for (let x = a; x <= b; x++) printable.add(x);
  const out = new Map<string, number>();
  let extra = 0;
  for (let b = 0; b < 256; b++) out.set(String.fromCodePoint(printable.has(b) ? b : 256 + extra++), b);
  return out;
}

function usesByteLevel(json: Json): boolean {
  const decoder = json.decoder;
  if (!isObject(decoder)) return false;
  if (decoder.type === 'ByteLevel') return true;
  return Array.isArray(decoder.decoders) && decoder.decoders.some((d) => isObject(d) && d.type === 'ByteLevel');
}

/** Length of the common prefix of two strings. */
function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

const APPEND_ROLE: Readonly<Record<string, AppendRole>> = {
  system: 'prompt',
  developer: 'prompt',
  user: 'prompt',
  assistant: 'act',
  tool: 'obs',
  ipython: 'obs',
  function: 'obs',
};
/** The template role a text piece of each rollout role is wrapped as. */
const TEMPLATE_ROLE: Readonly<Record<Role, string>> = { prompt: 'user', obs: 'tool', act: 'assistant', summary: 'user' };

/** A name for the rollout's `tokenizer` field: `hf:` and the model's name. */
export function hfTokenizerName(name: string): string {
  return `${HF_TOKENIZER_PREFIX}${name}`;
}

/** Whether a tokenizer renders chats with a template (the chat importer's hook). */
export function isHfTokenizer(tk: Tokenizer): tk is HfTokenizer {
  return typeof (tk as Partial<HfTokenizer>).renderChatEvents === 'function';
}

/** Message i's share of a conversation's rendering: [start, end), an assistant's header (generation prompt) ending at `header`. */
export interface ChatShare {
  start: number;
  header: number;
  end: number;
}

/** Messages of a window before and after the message whose share it finds, besides the first two (what templates treat apart: a system turn, the first user turn). */
const WINDOW_BEFORE = 2;
const WINDOW_AFTER = 2;
const WINDOW_HEAD = 2;
/** Messages of the conversation's tail a window carries, from its last user message on. */
const WINDOW_TAIL = 4;

/**
 * Where each message's share of `full` (the whole conversation rendered) lies. By definition (the
 * prefix rule, docs/tokenizers.md) message i's share ends where the rendering of messages 0..i stops
 * agreeing with the whole, and an assistant's header ends where the rendering of messages 0..i−1 with
 * the generation prompt does. Rendering every prefix costs O(n²); a template's turns depend on their
 * neighbours, on the conversation's first messages and on where its last user query is (Qwen3 shows
 * reasoning only after it), so the rule is applied to a window (those first messages, two before, the
 * message, two after, and the conversation's last user message with up to three after it) and
 * the window's share is taken when it is the whole's text at that place: its own share, and the window's
 * share of the previous message, read the same in `full`. A window that does not (a template that looks further)
 * falls back to the prefix rule on the whole conversation for that message. O(n) small renders when
 * the windows hold; O(n²) where they do not (a template that shows a turn differently once a later user
 * message follows lets the prefix rule run one share over several messages, and no window sees that).
 */
export function chatShares(
  messages: readonly ChatMessage[],
  full: string,
  render: (messages: readonly ChatMessage[], addGenerationPrompt: boolean) => string,
  /** Where to begin: message `index`, whose share starts at `at` of `full` (the shares returned are those from it on). */
  first: { index: number; at: number } = { index: 0, at: 0 },
): ChatShare[] {
  const shares: ChatShare[] = [];
  const lastUser = messages.findLastIndex((m) => m.role === 'user');
  /** The prefix rule on the whole conversation: message i's share from `at`. */
  const exact = (i: number, at: number): ChatShare => {
    let next: number;
    if (i + 1 === messages.length) next = full.length;
    else {
      try {
        next = commonPrefix(render(messages.slice(0, i + 1), false), full);
      } catch {
        // A template that refuses a conversation cut there (e.g. "no user query found"): the share ends
        // after the message's own text where the rendering shows it, else it joins the next message's.
        const content = messages[i].content;
        const found = typeof content === 'string' && content ? full.indexOf(content, at) : -1;
        next = found < 0 ? at : found + (content as string).length;
      }
    }
    const end = Math.max(at, next);
    let header = at;
    if (APPEND_ROLE[messages[i].role] === 'act') {
      try {
        header = Math.min(end, Math.max(at, commonPrefix(render(messages.slice(0, i), true), full)));
      } catch {
        // A template that cannot render what comes before (an assistant first): no header to split off.
      }
    }
    return { start: at, header, end };
  };
  /** The prefix rule inside a window around message i, mapped onto `full`; null when the window's text is not the whole's there. */
  const windowed = (i: number, at: number): ChatShare | null => {
    const from = i - WINDOW_BEFORE;
    const to = i + WINDOW_AFTER;
    // Too near either end for a window to save anything: the prefix rule itself is as cheap.
    if (from <= WINDOW_HEAD || to >= messages.length - 1) return null;
    const head = messages.slice(0, WINDOW_HEAD);
    const upTo = (k: number) => [...head, ...messages.slice(from, k + 1)]; // the window's messages through message k
    const tail = lastUser > to + 1 ? messages.slice(lastUser, lastUser + WINDOW_TAIL) : [];
    try {
      const whole = render([...upTo(to), ...tail], false);
      const ends = [i - 2, i - 1, i].map((k) => commonPrefix(render(upTo(k), false), whole));
      const previous = { start: ends[0], end: Math.max(ends[0], ends[1]) };
      const end = Math.max(previous.end, ends[2]);
      // The window's share of the previous message ends the whole's there (the whole's may start earlier:
      // a share the prefix rule lets run over several messages), and this message's reads the same.
      const anchor = previous.end - previous.start;
      if (anchor === 0 || anchor > at || full.slice(at - anchor, at) !== whole.slice(previous.start, previous.end)) return null;
      const length = end - previous.end;
      if (full.slice(at, at + length) !== whole.slice(previous.end, end)) return null;
      let header = at;
      if (APPEND_ROLE[messages[i].role] === 'act') {
        const generated = commonPrefix(render(upTo(i - 1), true), whole);
        header = at + Math.min(length, Math.max(0, generated - previous.end));
      }
      // The last message's share runs to the end of the whole; a window's never does.
      return { start: at, header, end: at + length };
    } catch {
      return null;
    }
  };
  let at = first.at;
  for (let i = first.index; i < messages.length; i++) {
    const share = windowed(i, at) ?? exact(i, at);
    shares.push(share);
    at = share.end;
  }
  return shares;
}

/** Messages of the windows that look for template edits: the first two and up to four before the message. */
const EDIT_WINDOW_BEFORE = 4;
/** Private-use text no message holds: where a probe message's content stands in a rendering. */
const PROBE = '\u{F0000}probe\u{F0001}';

type Render = (messages: readonly ChatMessage[], addGenerationPrompt: boolean) => string;

/** The messages of a window ending at message `last`: the conversation's first two and those from `from` on (all of them when `from` is near). */
function windowThrough(messages: readonly ChatMessage[], from: number, last: number): ChatMessage[] {
  return from <= WINDOW_HEAD ? messages.slice(0, last + 1) : [...messages.slice(0, WINDOW_HEAD), ...messages.slice(from, last + 1)];
}

/**
 * Assistant message i's turn as the template writes it when it is the last message (what the model
 * generated after the generation prompt), rendered in a window of the messages before it; null when
 * the template does not render the window.
 */
function turnAsLast(messages: readonly ChatMessage[], i: number, render: Render): string | null {
  const window = windowThrough(messages, i - EDIT_WINDOW_BEFORE, i);
  try {
    const whole = render(window, false);
    let header = 0;
    if (window.length > 1) header = commonPrefix(render(window.slice(0, -1), true), whole);
    return whole.slice(header);
  } catch {
    return null;
  }
}

/**
 * Whether every assistant message's share of `full` (the prefix rule's `shares`) is its whole turn as
 * the template writes it as the last message: true for templates that never write an earlier turn
 * differently once more messages follow (ChatML, Llama 3), false where a later message changed it
 * (Qwen3's reasoning, shown only after the last user query). Two renders of a few messages per turn.
 */
function assistantTurnsKept(messages: readonly ChatMessage[], full: string, shares: readonly ChatShare[], render: Render): boolean {
  return messages.every((m, i) => {
    if (APPEND_ROLE[m.role] !== 'act') return true;
    const turn = turnAsLast(messages, i, render);
    return turn === null || turn === full.slice(shares[i].header, shares[i].end);
  });
}

/** One piece of the live tape: its text and tokens, from physical id `first`. */
interface TapePiece {
  first: number;
  tokens: number[];
  text: string;
}

/**
 * A conversation as the context each message was written in, with the template's edits of it
 * (docs/tokenizers.md, "Template edits"). The tape is rendered message by message: before message k it
 * is the rendering of messages 0..k−1 (with the generation prompt before an assistant's turn, whose
 * text is then the turn as the template writes it as the last message: the targets); where the
 * rendering of messages 0..k does not extend the tape (Qwen3 stops showing an earlier turn's reasoning
 * once a new user query follows) an edit keeps the tape's longest common prefix, in whole tokens, and
 * inserts the rest of the new rendering of the earlier messages as `prompt` context; the message's
 * share is then appended (a share that the next message's rendering closes differently, two tool
 * results in one turn, ends where they part). `exact`: every prefix rendered (the definition). Else
 * the stretches between the places where a window of a few messages sees an edit are cut by the prefix
 * rule (chatShares) against the stretch's last rendering; a stretch whose rendering cuts an assistant
 * turn or does not extend the tape (an edit no window saw) is shortened. O(n) renders of a few
 * messages, and a few whole renders per edit. Throws when the template cannot render what the tape needs.
 */
export function chatTapeEvents(
  messages: readonly ChatMessage[],
  full: string,
  render: Render,
  codec: { encode(text: string): number[]; decode(tokens: number[]): string },
  options: { exact?: boolean } = {},
): EventJson[] {
  const n = messages.length;
  const events: EventJson[] = [];
  let tape: TapePiece[] = [];
  let text = '';
  let nextId = 0;
  const renders = new Map<number, string>([[n, full]]);
  /** The rendering of the first `count` messages. */
  const prefix = (count: number): string => {
    let r = renders.get(count);
    if (r === undefined) {
      r = render(messages.slice(0, count), false);
      renders.set(count, r);
    }
    return r;
  };
  const append = (role: AppendRole, piece: string) => {
    const tokens = codec.encode(piece);
    if (!tokens.length) return;
    events.push({ op: 'append', role, tokens });
    tape.push({ first: nextId, tokens, text: piece });
    nextId += tokens.length;
    text += piece;
  };
  /** The edit that makes the tape `to.slice(0, end)`: the common prefix kept in whole tokens, the rest inserted. */
  const edit = (to: string, end: number) => {
    const common = commonPrefix(text, to);
    const kept: TapePiece[] = [];
    let keptText = '';
    for (const piece of tape) {
      if (keptText.length + piece.text.length <= common) {
        kept.push(piece);
        keptText += piece.text;
        continue;
      }
      // The piece where they part: its longest run of first tokens that spells a prefix of both.
      const room = common - keptText.length;
      let count = 0;
      let spelled = '';
      for (let m = 1; m <= piece.tokens.length; m++) {
        const d = codec.decode(piece.tokens.slice(0, m));
        if (d.length > room) break;
        if (piece.text.startsWith(d)) [count, spelled] = [m, d];
      }
      if (count) {
        kept.push({ first: piece.first, tokens: piece.tokens.slice(0, count), text: spelled });
        keptText += spelled;
      }
      break;
    }
    const view: ViewPieceJson[] = [];
    for (const piece of kept) {
      const last = view.at(-1);
      if (last && 'keep' in last && last.keep[1] === piece.first) last.keep[1] = piece.first + piece.tokens.length;
      else view.push({ keep: [piece.first, piece.first + piece.tokens.length] });
    }
    const inserted = to.slice(keptText.length, Math.max(end, keptText.length));
    const tokens = codec.encode(inserted);
    if (tokens.length) {
      view.push({ insert: { role: 'prompt', tokens } });
      kept.push({ first: nextId, tokens, text: inserted });
      nextId += tokens.length;
    }
    if (view.length === 0) throw new Error('a template edit that keeps nothing and inserts nothing');
    events.push({ op: 'edit', view });
    tape = kept;
    text = keptText + inserted;
  };
  /** What a message of this role opens with (its header), measured after a first user message. */
  const opens = new Map<string, string>();
  const openOf = (role: string): string => {
    let open = opens.get(role);
    if (open !== undefined) return open;
    open = '';
    try {
      const first: ChatMessage = { role: 'user', content: 'x' };
      const before = render([first], false);
      const after = render([first, { role, content: PROBE, ...(APPEND_ROLE[role] === 'obs' ? { tool_call_id: '0', name: 'tool' } : {}) }], false);
      const at = after.indexOf(PROBE);
      if (at >= 0) open = after.slice(Math.min(commonPrefix(before, after), at), at);
    } catch {
      // No header to tell apart: the edit's insert then runs to the message's content.
    }
    opens.set(role, open);
    return open;
  };
  /** Where message k's own share starts in `rendered` (the first k+1 messages): where a probe in place of its content parts from it, less its header. */
  const startOf = (k: number, rendered: string, common: number): number => {
    let start = common;
    try {
      const probe = render([...messages.slice(0, k), { ...messages[k], content: PROBE }], false);
      const at = commonPrefix(probe, rendered);
      const open = openOf(messages[k].role);
      start = open && rendered.slice(at - open.length, at) === open ? at - open.length : at;
    } catch {
      // The template refuses the probe: the message's share starts where the tape and the rendering part.
    }
    return Math.min(rendered.length, Math.max(common, start));
  };
  /** Message k by the definition: its context the rendering of the messages before it, its share appended. */
  const step = (k: number) => {
    const message = messages[k];
    const role = APPEND_ROLE[message.role];
    const own = prefix(k + 1);
    if (role === 'act') {
      let context: string | null = null;
      if (k > 0) {
        try {
          context = render(messages.slice(0, k), true);
        } catch {
          // A template that cannot render what comes before (an assistant first): no header to split off.
        }
      }
      if (context !== null && !context.startsWith(text)) {
        let before = 0;
        try {
          before = commonPrefix(context, prefix(k));
        } catch {
          // The messages before it alone are refused: the insert runs to the generation prompt's start as the tape shows it.
        }
        edit(context, Math.max(commonPrefix(text, context), before));
      }
      if (!own.startsWith(text)) edit(own, commonPrefix(text, own));
      const header = Math.min(own.length, Math.max(text.length, context === null ? 0 : commonPrefix(context, own)));
      append('prompt', own.slice(text.length, header));
      append('act', own.slice(header));
      return;
    }
    if (!own.startsWith(text)) edit(own, startOf(k, own, commonPrefix(text, own)));
    let end = own.length;
    if (k + 1 < n) {
      const parted = commonPrefix(own, prefix(k + 2));
      if (parted >= text.length) end = parted;
    }
    append(role, own.slice(text.length, end));
  };
  /** A message whose rendering alone the template refuses ("no user query found"): its share runs to its content's end in the next rendering. */
  const stepUnrendered = (k: number) => {
    const next = prefix(k + 2);
    if (!next.startsWith(text)) edit(next, commonPrefix(text, next));
    const content = messages[k].content;
    const found = typeof content === 'string' && content ? next.indexOf(content, text.length) : -1;
    append(APPEND_ROLE[messages[k].role], next.slice(text.length, found < 0 ? text.length : found + (content as string).length));
  };
  const run = (k: number) => {
    if (k + 1 < n && APPEND_ROLE[messages[k].role] !== 'act') {
      try {
        prefix(k + 1);
      } catch {
        stepUnrendered(k);
        return;
      }
    }
    step(k);
  };
  /** Whether a window of the messages before message k sees the template write them differently once k follows. */
  const seen = new Map<number, boolean>();
  const editAt = (k: number): boolean => {
    let found = seen.get(k);
    if (found !== undefined) return found;
    const from = k - EDIT_WINDOW_BEFORE;
    try {
      const before = render(windowThrough(messages, from, k - 1), false);
      const parted = commonPrefix(before, render(windowThrough(messages, from, k), false));
      if (parted === before.length) found = false;
      else if (APPEND_ROLE[messages[k - 1].role] === 'act') found = true;
      else found = k < 2 || parted < commonPrefix(render(windowThrough(messages, from, k - 2), false), before);
    } catch {
      found = true;
    }
    seen.set(k, found);
    return found;
  };
  let k = 0;
  while (k < n) {
    if (k > 0 && !options.exact && editAt(k)) {
      // Where a window sees an edit the message is read by the definition (its edit, its share).
      run(k);
      k++;
      continue;
    }
    let end = k + 1;
    if (!options.exact) while (end < n && !editAt(end)) end++;
    // Messages k..end−2 by the prefix rule against the rendering through end−1, when no edit hides in them.
    if (end - k >= 3) {
      const whole = prefix(end);
      if (!whole.startsWith(text)) {
        // An edit the windows did not see lies in the stretch: halve it and look again.
        seen.set(k + ((end - k) >> 1), true);
        continue;
      }
      const shares = chatShares(messages.slice(0, end), whole, render, { index: k, at: text.length });
      let cut = -1;
      for (let i = k; i < end - 1 && cut < 0; i++) {
        if (APPEND_ROLE[messages[i].role] !== 'act') continue;
        const turn = turnAsLast(messages, i, render);
        if (turn !== null && turn !== whole.slice(shares[i - k].header, shares[i - k].end)) cut = i;
      }
      if (cut >= 0) {
        // An assistant turn the stretch's rendering writes differently: an edit follows it; the stretch ends after it.
        seen.set(cut + 1, true);
        continue;
      }
      for (let i = k; i < end - 1; i++) {
        const { start, header, end: to } = shares[i - k];
        const role = APPEND_ROLE[messages[i].role];
        if (role === 'act') {
          append('prompt', whole.slice(start, header));
          append('act', whole.slice(header, to));
        } else append(role, whole.slice(start, to));
      }
      k = end - 1;
    }
    run(k);
    k++;
  }
  return events;
}

export function createHfTokenizer(files: HfTokenizerFiles): HfTokenizer {
  if (!isObject(files.tokenizer) || !isObject(files.tokenizer.model)) throw new Error('tokenizer.json: not a tokenizers JSON file (no "model" object)');
  const json = files.tokenizer;
  const config = isObject(files.tokenizerConfig) ? files.tokenizerConfig : {};
  let model: HfTokenizerModel;
  try {
    model = new HfTokenizerModel(json, config);
  } catch (error) {
    throw new Error(`tokenizer.json: ${(error as Error).message}`);
  }
  const added = model.get_added_tokens_decoder();
  const size = Math.max(...model.get_vocab(true).values()) + 1;
  if (files.vocab !== undefined && files.vocab < size)
    throw new Error(`tokenizer.json has ids up to ${size - 1}, but the model's vocab_size is ${files.vocab}`);
  const vocab = files.vocab ?? size;
  const templateText = templateOf(config, files.chatTemplate);
  const template = templateText ? new Template(templateText) : null;
  const specials: Json = {};
  for (const key of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const s = tokenString(config[key]);
    if (s !== undefined) specials[key] = s;
  }
  const byteLevel = usesByteLevel(json);
  const decoderTable = byteLevel ? byteDecoder() : null;
  const utf8 = new TextEncoder();
  const bytesCache = new Map<number, Uint8Array | null>();

  const encode = (text: string): number[] => (text ? model.encode(text, { add_special_tokens: false }).ids : []);
  const render = (messages: readonly ChatMessage[], options: { tools?: unknown; addGenerationPrompt?: boolean } = {}): string => {
    if (!template) throw new Error(`the ${files.name} tokenizer has no chat template (tokenizer_config.json chat_template)`);
    const context: Json = { ...specials, messages, add_generation_prompt: options.addGenerationPrompt ?? false };
    if (options.tools !== undefined && options.tools !== null) context.tools = options.tools;
    return template.render(context);
  };

  // Each role's wrapping of one text piece: what the template writes before and after a message's
  // content, measured after a first user message so that what opens a conversation is not counted.
  const SENTINEL = '\u{F0000}piece\u{F0001}';
  const wraps = new Map<Role, { open: number[]; close: string }>();
  const wrap = (role: Role) => {
    let w = wraps.get(role);
    if (w) return w;
    w = { open: [], close: '' };
    if (template) {
      const first: ChatMessage = { role: 'user', content: 'x' };
      const before = render([first]);
      const after = render([first, { role: TEMPLATE_ROLE[role], content: SENTINEL, ...(role === 'obs' ? { tool_call_id: '0', name: 'tool' } : {}) }]);
      const at = after.indexOf(SENTINEL);
      if (at >= 0) {
        const start = commonPrefix(before, after);
        w = { open: encode(after.slice(Math.min(start, at), at)), close: after.slice(at + SENTINEL.length) };
      }
    }
    wraps.set(role, w);
    return w;
  };

  const tokenBytes = (token: number): Uint8Array | null => {
    let bytes = bytesCache.get(token);
    if (bytes !== undefined) return bytes;
    if (added.get(token)?.special) bytes = null;
    else {
      const piece = model.id_to_token(token);
      if (piece === undefined) bytes = null;
      else if (decoderTable && !added.has(token)) {
        const out: number[] = [];
        for (const ch of piece) {
          const b = decoderTable.get(ch);
          if (b === undefined) out.push(...utf8.encode(ch));
          else out.push(b);
        }
        bytes = Uint8Array.from(out);
      } else bytes = utf8.encode(model.decode([token], { skip_special_tokens: false }));
    }
    bytesCache.set(token, bytes);
    return bytes;
  };

  const tk: HfTokenizer = {
    name: hfTokenizerName(files.name),
    vocab,
    chatTemplate: templateText,
    marker: (role) => wrap(role).open,
    encodePiece(text, role) {
      const w = wrap(role);
      return [...w.open, ...encode(text + w.close)];
    },
    pieceLength(text, role) {
      const w = wrap(role);
      return w.open.length + encode(text + w.close).length;
    },
    encode,
    decode: (tokens) => (tokens.length ? model.decode(Array.from(tokens), { skip_special_tokens: false }) : ''),
    label(token) {
      const special = added.get(token);
      if (special?.special) return special.content;
      const bytes = tokenBytes(token);
      return bytes ? visibleText(bytes) : `#${token}`;
    },
    bytes: tokenBytes,
    renderChat: render,
    renderChatEvents(messages, tools) {
      const full = render(messages, { tools });
      const events: EventJson[] = [];
      const append = (role: AppendRole, text: string) => {
        const tokens = encode(text);
        if (tokens.length) events.push({ op: 'append', role, tokens });
      };
      const renderIn = (m: readonly ChatMessage[], gen: boolean) => render(m, { tools, addGenerationPrompt: gen });
      const shares = chatShares(messages, full, renderIn);
      if (messages.every((m) => APPEND_ROLE[m.role]) && !assistantTurnsKept(messages, full, shares, renderIn)) {
        // A template that writes earlier turns differently once later messages follow: its edits.
        try {
          return chatTapeEvents(messages, full, renderIn, tk);
        } catch {
          // A template that refuses a prefix the tape needs: the prefix rule's shares of the whole.
        }
      }
      messages.forEach((message, i) => {
        const role = APPEND_ROLE[message.role];
        if (!role) throw new Error(`messages[${i}]: role ${JSON.stringify(message.role)} is not one of ${Object.keys(APPEND_ROLE).join(', ')}`);
        const { start, header, end } = shares[i];
        if (role === 'act') {
          append('prompt', full.slice(start, header));
          append('act', full.slice(header, end));
        } else append(role, full.slice(start, end));
      });
      return events;
    },
  };
  return tk;
}

/**
 * A `text` event (or an edit's text insert) as token ids, the same count: an `act` piece becomes its
 * marker as a `prompt` append (never a target either way) and its text as the `act` append (logprobs of
 * the text's tokens kept). Ids after it are unchanged, so `keep` ranges stay as they are.
 */
export function materializeEvent(event: EventJson, tk: Tokenizer): EventJson[] {
  if (event.op === 'edit') {
    return [
      {
        op: 'edit',
        view: event.view.map((piece) => {
          if ('keep' in piece || piece.insert.text === undefined) return piece;
          const { role, text } = piece.insert as { role: InsertRole; text: string };
          return { insert: { role, tokens: tk.encodePiece(text, role) } };
        }),
      },
    ];
  }
  if (event.text === undefined) return [event];
  const all = tk.encodePiece(event.text, event.role);
  const markerLength = tk.marker(event.role).length;
  if (event.role !== 'act' || markerLength === 0) {
    const out: EventJson = { op: 'append', role: event.role, tokens: all };
    if (event.logprobs) out.logprobs = event.logprobs;
    return [out];
  }
  const marker: EventJson = { op: 'append', role: 'prompt', tokens: all.slice(0, markerLength) };
  if (all.length === markerLength) return [marker];
  const act: EventJson = { op: 'append', role: 'act', tokens: all.slice(markerLength) };
  if (event.logprobs) act.logprobs = event.logprobs.slice(markerLength);
  return [marker, act];
}
