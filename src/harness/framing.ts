// How the harness frames its pieces as byte-tokenizer tokens, and how a live view reads back as
// blocks. Every harness piece that hands the turn to the policy ends with the `<act>` cue, so the
// policy's first generated token is the action's first byte and the cue is never a target:
//   prompt  = BOS <prompt> bytes <act>      obs = <obs> bytes <act>      summary = <summary> bytes <act>
//   action  = bytes, then '\n' or EOS (generated)

import { BOS, EOS, ROLE_MARKER, byteTokenizer } from '../rollout/tokenizer';

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
