// How the harness frames its pieces as byte-tokenizer tokens, and how a live view reads back as
// blocks. Every harness piece that hands the turn to the policy ends with the `<act>` cue, so the
// policy's first generated token is the action's first byte and the cue is never a target:
//   prompt  = BOS <prompt> bytes <act>      obs = <obs> bytes <act>      summary = <summary> bytes <act>
//   action  = bytes, then '\n' or EOS (generated)
// A model folder's tokenizer frames them as its chat template writes messages (hfFraming): the prompt a
// user turn, observations tool results, summaries user turns, each followed by the template's assistant
// header as the cue; an action ends with the '\n' token (a tool call) or an end-of-turn token (the answer).

import { BOS, EOS, ROLE_MARKER, byteTokenizer } from '../rollout/tokenizer';
import { BYTE_VOCAB } from '../rollout/tokenizer-types';
import type { HfTokenizer } from '../rollout/tokenizer-hf';

export const ACT_CUE = ROLE_MARKER.act;

/** Byte 10 ('\n'): ends an action that hands the turn back to the harness. */
export const NEWLINE = 10;

export function promptTokens(text: string): number[] {
  return [BOS, ROLE_MARKER.prompt, ...byteTokenizer.encode(text), ACT_CUE];
}

export function obsTokens(text: string): number[] {
  return [ROLE_MARKER.obs, ...byteTokenizer.encode(text), ACT_CUE];
}

/** A summary piece from text (editor-written) or from token values (policy-written, for fold). */
export function summaryTokens(content: string | readonly number[]): number[] {
  const body = typeof content === 'string' ? byteTokenizer.encode(content) : content;
  return [ROLE_MARKER.summary, ...body, ACT_CUE];
}

/** Action tokens for text: its bytes, then `\n` (a tool call) or EOS (the final answer). */
export function actionTokens(text: string, final: boolean): number[] {
  return [...byteTokenizer.encode(text), final ? EOS : NEWLINE];
}

/** One piece of a live view as text: what a scripted policy reads. */
export interface ViewBlock {
  role: 'prompt' | 'obs' | 'summary' | 'act';
  /** The piece's text without its marker, cue or stop token (special tokens inside by name). */
  text: string;
}

const MARKER_ROLE: Readonly<Record<number, ViewBlock['role']>> = {
  [ROLE_MARKER.prompt]: 'prompt',
  [ROLE_MARKER.obs]: 'obs',
  [ROLE_MARKER.summary]: 'summary',
};

/**
 * Splits a live view into blocks: a `<prompt>`, `<obs>` or `<summary>` marker opens a harness
 * block, the `<act>` cue closes it and opens an action, which runs to its stop token. BOS is
 * skipped. Tokens outside any block (none in a harness-built view) are ignored.
 */
export function readView(view: ArrayLike<number>): ViewBlock[] {
  const blocks: ViewBlock[] = [];
  let role: ViewBlock['role'] | null = null;
  let body: number[] = [];
  // A cue followed by no action token (the cue at the end: the action being decoded now; a cue
  // before a marker) opens no block; a real action has at least its stop token (`stopped`).
  const close = (stopped = false) => {
    if (role !== null && (stopped || role !== 'act' || body.length > 0)) blocks.push({ role, text: byteTokenizer.decode(body) });
    role = null;
    body = [];
  };
  for (let i = 0; i < view.length; i++) {
    const t = view[i];
    if (t === BOS) continue;
    if (MARKER_ROLE[t] !== undefined) {
      close();
      role = MARKER_ROLE[t];
    } else if (t === ACT_CUE) {
      close();
      role = 'act';
    } else if (role === 'act' && (t === NEWLINE || t === EOS)) {
      close(true);
    } else body.push(t);
  }
  close();
  return blocks;
}

/**
 * The harness's pieces in one tokenizer's tokens: what the rollout records (`tokenizer`, `vocab`), the cue
 * that ends every harness piece and hands the turn to the policy, and the stop tokens of an action.
 */
export interface Framing {
  readonly tokenizer: string;
  readonly vocab: number;
  /** The tokens every harness piece ends with: `<act>`, or the chat template's assistant header. */
  readonly cue: readonly number[];
  /** Ends an action that hands the turn back to the harness (a tool call, a fold). */
  readonly newline: number;
  /** End an action that ends the episode (the final answer). */
  readonly eos: readonly number[];
  prompt(text: string): number[];
  obs(text: string): number[];
  /** A summary piece from text (editor-written) or from an action's tokens (policy-written, for fold). */
  summary(content: string | readonly number[]): number[];
  /** A fold action's summary tokens (its tokens after `fold `, without the stop token), or null for another action. */
  foldSummary(tokens: readonly number[]): number[] | null;
  /** An action's text (without its stop token), as the environment reads it. */
  decode(tokens: readonly number[]): string;
}

/** What opens a fold action (editors/fold.ts): `fold <summary>`. */
export const FOLD_PREFIX = 'fold ';
const FOLD_BYTES = byteTokenizer.encode(FOLD_PREFIX);

/** The workbench's own framing: bytes and the byte tokenizer's role markers. */
export const BYTE_FRAMING: Framing = {
  tokenizer: 'byte',
  vocab: BYTE_VOCAB,
  cue: [ACT_CUE],
  newline: NEWLINE,
  eos: [EOS],
  prompt: promptTokens,
  obs: obsTokens,
  summary: summaryTokens,
  foldSummary(tokens) {
    if (!(tokens.length > FOLD_BYTES.length && FOLD_BYTES.every((t, i) => tokens[i] === t))) return null;
    return tokens.slice(FOLD_BYTES.length, tokens.length - 1);
  },
  decode: (tokens) => byteTokenizer.decode(tokens),
};

/**
 * A model folder's framing: its chat template's messages, its tokenizer's ids. `eos` are the model's
 * end-of-turn ids (generation_config.json `eos_token_id`). The template must write an assistant header
 * after a user turn (the cue), and '\n' must be one token (the tool call's stop).
 */
export function hfFraming(tk: HfTokenizer, eos: readonly number[]): Framing {
  if (!tk.chatTemplate) throw new Error(`the ${tk.name} tokenizer has no chat template: the harness frames its turns with one`);
  const cue = tk.marker('act');
  if (cue.length === 0) throw new Error(`the ${tk.name} chat template writes no assistant header: nothing would cue the policy's turn`);
  const newline = tk.encode('\n');
  if (newline.length !== 1) throw new Error(`the ${tk.name} tokenizer has no single '\\n' token to end a tool call`);
  if (eos.length === 0) throw new Error(`the ${tk.name} model names no end-of-turn token (generation_config.json eos_token_id)`);
  const summaryOpen = tk.marker('summary');
  const summaryClose = tk.encodePiece('', 'summary').slice(summaryOpen.length);
  return {
    tokenizer: tk.name,
    vocab: tk.vocab,
    cue,
    newline: newline[0],
    eos,
    prompt: (text) => [...tk.encode(tk.renderChat([{ role: 'user', content: text }])), ...cue],
    obs: (text) => [...tk.encodePiece(text, 'obs'), ...cue],
    summary: (content) => [...(typeof content === 'string' ? tk.encodePiece(content, 'summary') : [...summaryOpen, ...content, ...summaryClose]), ...cue],
    foldSummary(tokens) {
      const text = tk.decode(tokens.slice(0, -1));
      return text.startsWith(FOLD_PREFIX) && text.length > FOLD_PREFIX.length ? tk.encode(text.slice(FOLD_PREFIX.length)) : null;
    },
    decode: (tokens) => tk.decode(tokens),
  };
}

/** Whether `tokens` ends with `cue`. */
export function endsWithCue(tokens: readonly number[], cue: readonly number[]): boolean {
  if (tokens.length < cue.length) return false;
  const at = tokens.length - cue.length;
  return cue.every((t, i) => tokens[at + i] === t);
}
