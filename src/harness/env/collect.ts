// `collect`: a fan-out task whose answer depends on every observation. The question lists `pages`
// page numbers; `read P` returns page P's one-letter code among decoy pages and filler; the answer
// is the codes joined in the question's order, scored by exact match. Nothing in an observation
// says how far the agent is, so what survives an edit matters: the expert writes its progress into
// its own actions (`have ...`), as agents keep notes, and summaries list the codes read.
//
//   prompt  Q: join the codes of pages 7, 2, 5.
//   act     read 7
//   obs     page 13: code=x. page 7: code=k. page 4: code=m. note see page also list
//   act     read 2 have k
//   obs     page 2: code=q. ...
//   act     read 5 have kq
//   obs     page 5: code=z. ...
//   act     answer kqz<EOS>

import { createRng, type Rng } from '../../util/prng';
import type { ViewBlock } from '../framing';
import { answerStep, fillerText, shuffle } from './text';
import type { Env, Episode, ExpertMove, StepResult } from './types';

export interface CollectOptions {
  /** Pages to read (the answer has this many letters). */
  pages: number;
  /** Decoy pages (not asked for) shown with each page read. */
  decoys: number;
  /** Filler characters at the end of each observation. */
  filler: number;
  /**
   * Page numbers are 1..pool (at least pages + decoys + 1). Default 9, single-digit pages, or
   * pages + decoys + 1 when that is more.
   */
  pool: number;
}

export const COLLECT_DEFAULTS: Readonly<CollectOptions> = { pages: 3, decoys: 2, filler: 40, pool: 9 };

/** What one read established: page `page` has code `code`. */
export interface CollectNote {
  page: number;
  code: string;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const FILLER_WORDS: readonly string[] = ['note', 'see', 'page', 'also', 'list', 'more', 'data', 'info', 'misc', 'log', 'old', 'new'];
const READ = /^read (\d+)(?: have ([a-z]+))?$/;
const FACT = /page (\d+): code=([a-z])\./g;
const QUESTION = /^Q: join the codes of pages ([\d, ]+)\.$/;

function isCollectNote(note: unknown): note is CollectNote {
  const n = note as CollectNote;
  return typeof n === 'object' && n !== null && typeof n.page === 'number' && typeof n.code === 'string';
}

export function collectQuestion(pages: readonly number[]): string {
  return `Q: join the codes of pages ${pages.join(', ')}.`;
}

/** `page 7: code=k. page 2: code=q.` — editor summaries and the expert's fold summaries alike. */
export function formatFacts(facts: readonly CollectNote[]): string {
  return facts.length === 0 ? 'nothing read.' : facts.map((f) => `page ${f.page}: code=${f.code}.`).join(' ');
}

export function createCollectWorld(seed: number, o: CollectOptions): { asked: number[]; code: ReadonlyMap<number, string>; rng: Rng } {
  const rng = createRng(seed);
  const code = new Map<number, string>();
  for (let p = 1; p <= o.pool; p++) code.set(p, LETTERS[rng.int(LETTERS.length)]);
  const asked = shuffle(
    rng,
    Array.from({ length: o.pool }, (_, i) => i + 1),
  ).slice(0, o.pages);
  return { asked, code, rng };
}

function checkOptions(o: CollectOptions): void {
  const int = (name: keyof CollectOptions, min: number, max: number) => {
    const v = o[name];
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`collect: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  };
  int('pages', 1, 16);
  int('decoys', 0, 16);
  int('filler', 0, 4096);
  int('pool', o.pages + o.decoys + 1, 999);
}

export function createCollectEnv(options: Partial<CollectOptions> = {}): Env {
  const o: CollectOptions = { ...COLLECT_DEFAULTS, ...options };
  if (options.pool === undefined) o.pool = Math.max(COLLECT_DEFAULTS.pool, o.pages + o.decoys + 1);
  checkOptions(o);

  function reset(seed: number): Episode {
    const { asked, code, rng } = createCollectWorld(seed, o);
    const gold = asked.map((p) => code.get(p)).join('');
    const others = Array.from({ length: o.pool }, (_, i) => i + 1).filter((p) => !asked.includes(p));

    const read = (page: number): StepResult => {
      const c = code.get(page);
      if (c === undefined) return { done: false, text: `no page ${page}.` };
      const shown = shuffle(rng, [
        page,
        ...shuffle(
          rng,
          others.filter((p) => p !== page),
        ).slice(0, o.decoys),
      ]);
      const parts = shown.map((p) => `page ${p}: code=${code.get(p)}.`);
      if (o.filler > 0) parts.push(fillerText(rng, FILLER_WORDS, o.filler));
      const note: CollectNote = { page, code: c };
      return { done: false, text: parts.join(' '), note };
    };

    return {
      prompt: collectQuestion(asked),
      gold,
      step(action, final) {
        const text = action.trim();
        const end = answerStep(text, final, gold);
        if (end) return end;
        const r = READ.exec(text);
        if (r) return read(Number(r[1]));
        return { done: false, text: 'error: use read PAGE or answer CODES.' };
      },
      summarize(notes) {
        return formatFacts(uniqueFacts(notes.filter(isCollectNote)));
      },
    };
  }

  return {
    id: 'collect',
    options: { ...o },
    maxTurns: 2 * o.pages + 4,
    reset,
    solve: solveCollect,
    summarizeView: (view) => {
      const state = readCollectState(view);
      return formatFacts(state ? state.asked.filter((p) => state.known.has(p)).map((p) => ({ page: p, code: state.known.get(p)! })) : []);
    },
    moves: (view) => {
      const state = readCollectState(view);
      const have = state ? prefixCodes(state) : '';
      const pages = Array.from({ length: o.pool }, (_, i) => i + 1);
      const note = have ? ` have ${have}` : '';
      return [...pages.map((p) => ({ text: `read ${p}${note}`, final: false })), ...(have ? [{ text: `answer ${have}`, final: true }] : [])];
    },
  };
}

function uniqueFacts(notes: readonly CollectNote[]): CollectNote[] {
  const out: CollectNote[] = [];
  for (const n of notes) if (!out.some((f) => f.page === n.page)) out.push({ page: n.page, code: n.code });
  return out;
}

export interface CollectState {
  asked: number[];
  /** Codes known from the view: facts in observations and summaries, and the agent's own notes. */
  known: Map<number, string>;
}

/** What the view tells: the pages asked for and every code visible for them. */
export function readCollectState(view: readonly ViewBlock[]): CollectState | null {
  const prompt = view.find((b) => b.role === 'prompt');
  const q = prompt && QUESTION.exec(prompt.text);
  if (!q) return null;
  const asked = q[1].split(', ').map(Number);
  const known = new Map<number, string>();
  for (const block of view) {
    if (block.role === 'act') {
      const have = READ.exec(block.text)?.[2];
      if (have) [...have].forEach((c, i) => i < asked.length && known.set(asked[i], c));
    } else if (block.role === 'obs' || block.role === 'summary') {
      for (const [, page, c] of block.text.matchAll(FACT)) known.set(Number(page), c);
    }
  }
  return { asked, known };
}

function prefixCodes(state: CollectState): string {
  let have = '';
  for (const p of state.asked) {
    const c = state.known.get(p);
    if (c === undefined) break;
    have += c;
  }
  return have;
}

/** Read the first asked page whose code is not in view, noting the codes known so far; else answer. */
export function solveCollect(view: readonly ViewBlock[]): ExpertMove {
  const state = readCollectState(view);
  if (!state) throw new Error('collect expert: no question in the live view');
  const have = prefixCodes(state);
  if (have.length === state.asked.length) return { text: `answer ${have}`, final: true };
  return { text: `read ${state.asked[have.length]}${have ? ` have ${have}` : ''}`, final: false };
}
