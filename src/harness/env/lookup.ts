// `lookup`: a seeded multi-hop lookup task in the spirit of the paper's search benchmarks. A
// random "boss" relation over a pool of short names; the question chains it `hops` times; each
// `lookup NAME` returns that person's fact among distractor facts and filler, with a step counter;
// `answer NAME` is scored by exact match (the reward). Texts are short and regular on purpose:
//
//   prompt  Q: who is the boss of the boss of ann?
//   act     lookup ann
//   obs     step 1/2. eve: boss=gus. ann: boss=bob. kim: boss=ann. note see page also list
//   act     lookup bob
//   obs     step 2/2. bob: boss=cal. ...
//   act     answer cal<EOS>
//
// The step counter (lookups so far / hops) makes the task solvable from the latest observation,
// so every memory editor leaves it solvable; what an edit removes still changes what the policy
// conditions on, which is what the conditioning tree records.

import { createRng, type Rng } from '../../util/prng';
import type { ViewBlock } from '../framing';
import { answerStep, fillerText, shuffle } from './text';
import type { Env, Episode, ExpertMove, StepResult } from './types';

export const LOOKUP_NAMES: readonly string[] = [
  'ann',
  'bob',
  'cal',
  'dan',
  'eve',
  'fay',
  'gus',
  'hal',
  'ian',
  'jim',
  'kim',
  'lee',
  'max',
  'ned',
  'oli',
  'pam',
  'qin',
  'ray',
  'sam',
  'tom',
  'uma',
  'val',
  'wes',
  'xia',
  'yan',
  'zoe',
  'abe',
  'bea',
  'cyd',
  'deb',
  'eli',
  'flo',
  'gil',
  'hub',
  'ida',
  'jon',
  'kai',
  'lou',
  'mia',
  'nia',
];

const FILLER_WORDS: readonly string[] = [
  'note',
  'see',
  'page',
  'also',
  'list',
  'more',
  'data',
  'info',
  'misc',
  'log',
  'old',
  'new',
  'file',
  'item',
  'text',
  'ref',
];

export interface LookupOptions {
  /** Lookups needed: the question chains the relation this many times. */
  hops: number;
  /** Facts about other people in each observation (shuffled in with the one asked for). */
  distractors: number;
  /** Filler characters at the end of each observation (the observation-length knob). */
  filler: number;
  /** Size of the name pool (at most LOOKUP_NAMES.length, at least hops + 1 and distractors + 1). */
  names: number;
}

export const LOOKUP_DEFAULTS: Readonly<LookupOptions> = { hops: 3, distractors: 2, filler: 40, names: 40 };

/** What one successful lookup established: `from`'s boss is `to`, at step `step` of `hops`. */
export interface LookupNote {
  from: string;
  to: string;
  step: number;
  hops: number;
}

export function isLookupNote(note: unknown): note is LookupNote {
  const n = note as LookupNote;
  return typeof n === 'object' && n !== null && typeof n.from === 'string' && typeof n.to === 'string' && typeof n.step === 'number';
}

export function lookupQuestion(start: string, hops: number): string {
  return `Q: who is ${'the boss of '.repeat(hops)}${start}?`;
}

export interface Link {
  from: string;
  to: string;
}

export interface LookupState {
  /** Links found, oldest first; the last one is the latest established. */
  links: Link[];
  step: number;
  hops: number;
}

/**
 * `found ann->bob, bob->cal. step 2/3.` (editor summaries and the expert's fold summaries alike);
 * `found nothing.` when no lookup succeeded, which tells nothing about progress.
 */
export function formatLookupSummary(state: LookupState): string {
  if (state.links.length === 0) return 'found nothing.';
  return `found ${state.links.map((l) => `${l.from}->${l.to}`).join(', ')}. step ${state.step}/${state.hops}.`;
}

/** The state a summary states; null for `found nothing.` and for text that is no summary. */
export function parseLookupSummary(text: string): LookupState | null {
  const m = /^found (.*)\. step (\d+)\/(\d+)\.$/.exec(text);
  if (!m) return null;
  const links = m[1].split(', ').map((pair) => pair.split('->'));
  if (links.some((l) => l.length !== 2)) return null;
  return { links: links.map(([from, to]) => ({ from, to })), step: Number(m[2]), hops: Number(m[3]) };
}

/** The world of one seed: the chain start -> ... -> answer and everyone's boss. */
export interface LookupWorld {
  chain: string[];
  boss: ReadonlyMap<string, string>;
}

export function createLookupWorld(seed: number, options: LookupOptions): { world: LookupWorld; rng: Rng } {
  const rng = createRng(seed);
  const pool = shuffle(rng, LOOKUP_NAMES.slice(0, options.names));
  const chain = pool.slice(0, options.hops + 1);
  const boss = new Map<string, string>();
  for (let i = 0; i < options.hops; i++) boss.set(chain[i], chain[i + 1]);
  for (const name of pool) {
    if (boss.has(name)) continue;
    let other = name;
    while (other === name) other = pool[rng.int(pool.length)];
    boss.set(name, other);
  }
  return { world: { chain, boss }, rng };
}

const LOOKUP = /^lookup (\S+)$/;
const FACT = /(\S+): boss=(\S+?)\./g;
const STEP = /^step (\d+)\/(\d+)\./;

function checkOptions(o: LookupOptions): void {
  const int = (name: keyof LookupOptions, min: number, max = Infinity) => {
    const v = o[name];
    if (!Number.isInteger(v) || v < min || v > max) throw new Error(`lookup: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  };
  int('hops', 1, 16);
  int('distractors', 0, 16);
  int('filler', 0, 4096);
  int('names', Math.max(o.hops + 1, o.distractors + 1, 2), LOOKUP_NAMES.length);
}

export function createLookupEnv(options: Partial<LookupOptions> = {}): Env {
  const o: LookupOptions = { ...LOOKUP_DEFAULTS, ...options };
  checkOptions(o);

  const pool = LOOKUP_NAMES.slice(0, o.names);

  function reset(seed: number): Episode {
    const { world, rng } = createLookupWorld(seed, o);
    const gold = world.chain[o.hops];
    let step = 0;

    const lookup = (name: string): StepResult => {
      step++;
      const head = `step ${step}/${o.hops}.`;
      const boss = world.boss.get(name);
      if (boss === undefined) return { done: false, text: `${head} no entry for ${name.slice(0, 12)}.` };
      const others = shuffle(
        rng,
        pool.filter((n) => n !== name),
      ).slice(0, o.distractors);
      const facts = shuffle(rng, [name, ...others]).map((n) => `${n}: boss=${world.boss.get(n)}.`);
      const parts = [head, ...facts];
      if (o.filler > 0) parts.push(fillerText(rng, FILLER_WORDS, o.filler));
      const note: LookupNote = { from: name, to: boss, step, hops: o.hops };
      return { done: false, text: parts.join(' '), note };
    };

    return {
      prompt: lookupQuestion(world.chain[0], o.hops),
      gold,
      step(action, final) {
        const text = action.trim();
        const end = answerStep(text, final, gold);
        if (end) return end;
        const name = LOOKUP.exec(text);
        if (name) return lookup(name[1]);
        return { done: false, text: 'error: use lookup NAME or answer NAME.' };
      },
      summarize(notes) {
        return formatLookupSummary(stateFromNotes(notes.filter(isLookupNote), o.hops));
      },
    };
  }

  return {
    id: 'lookup',
    options: { ...o },
    maxTurns: 2 * o.hops + 4,
    reset,
    solve: solveLookup,
    moves: () =>
      pool.flatMap((name) => [
        { text: `lookup ${name}`, final: false },
        { text: `answer ${name}`, final: true },
      ]),
    summarizeView: (view) => formatLookupSummary(readLookupState(view) ?? { links: [], step: 0, hops: o.hops }),
  };
}

/** Adds a link, or moves it to the end when known: the last link is always the latest. */
function addLink(links: Link[], from: string, to: string): void {
  const at = links.findIndex((l) => l.from === from && l.to === to);
  if (at >= 0) links.splice(at, 1);
  links.push({ from, to });
}

function stateFromNotes(notes: readonly LookupNote[], hops: number): LookupState {
  const links: Link[] = [];
  for (const n of notes) addLink(links, n.from, n.to);
  const last = notes[notes.length - 1];
  return { links, step: last ? last.step : 0, hops: last ? last.hops : hops };
}

/**
 * What the live view tells about progress: the links found (from summaries and from each lookup
 * whose observation is visible) and the latest step. Null before the first lookup result.
 */
export function readLookupState(view: readonly ViewBlock[]): LookupState | null {
  let state: LookupState | null = null;
  const links: Link[] = [];
  let pending: string | null = null;
  for (const block of view) {
    if (block.role === 'act') {
      pending = LOOKUP.exec(block.text)?.[1] ?? null;
    } else if (block.role === 'obs') {
      const step = STEP.exec(block.text);
      if (pending !== null && step) {
        for (const [, from, to] of block.text.matchAll(FACT)) {
          if (from !== pending) continue;
          addLink(links, from, to);
          state = { links, step: Number(step[1]), hops: Number(step[2]) };
        }
      }
      pending = null;
    } else if (block.role === 'summary') {
      const summary = parseLookupSummary(block.text);
      if (summary) {
        for (const l of summary.links) addLink(links, l.from, l.to);
        state = { links, step: summary.step, hops: summary.hops };
      }
      pending = null;
    }
  }
  return state;
}

/** The latest link's target is the person to look up next, or the answer at the last step. */
export function solveLookup(view: readonly ViewBlock[]): ExpertMove {
  const state = readLookupState(view);
  if (state === null || state.links.length === 0) {
    const prompt = view.find((b) => b.role === 'prompt');
    const start = prompt && /of (\S+)\?$/.exec(prompt.text);
    if (!start) throw new Error('lookup expert: no question in the live view');
    return { text: `lookup ${start[1]}`, final: false };
  }
  const next = state.links[state.links.length - 1].to;
  return state.step >= state.hops ? { text: `answer ${next}`, final: true } : { text: `lookup ${next}`, final: false };
}
