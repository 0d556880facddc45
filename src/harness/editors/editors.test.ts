// Every editor on scripted rollouts, against a token-level reference written here from the
// editors' definitions: at each decode the reference, given the view just before the editor's
// turn (read back from the rollout's own conditioning tree), says whether the editor must fire and
// what the new view must be; the rollout must validate and re-derive to the views decoded from.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EditEventJson } from '../../rollout/format';
import type { Rollout } from '../../rollout/rollout';
import { BOS, ROLE_MARKER, byteTokenizer } from '../../rollout/tokenizer';
import { validateRollout } from '../../rollout/validate';
import { deriveTree } from '../../tree';
import { createEnv, type Env } from '../env';
import { createCollectEnv } from '../env/collect';
import { createLookupEnv, formatLookupSummary, readLookupState } from '../env/lookup';
import { runEpisode, type EpisodeResult } from '../episode';
import { readView } from '../framing';
import { createExpertPolicy } from '../policies/expert';
import type { Policy } from '../policy';
import { verifyEpisode } from '../verify';
import { FOLD_REFUSED, createEditor, editorSpec, type EditorKind, type EditorSpec } from './index';

const CUE = ROLE_MARKER.act;
const NEWLINE = 10;

/** A block of a view at token level: its role and its (id, token) pairs. */
interface RefBlock {
  role: 'prompt' | 'obs' | 'summary' | 'act';
  ids: number[];
  tokens: number[];
}

/** Splits a view at markers: BOS/<prompt>, <obs>, <summary> open harness blocks; a cue ends one and opens an action. */
function blocksOf(ids: readonly number[], tokens: readonly number[]): RefBlock[] {
  const blocks: RefBlock[] = [];
  let cur: RefBlock | null = null;
  const open = (role: RefBlock['role']) => {
    cur = { role, ids: [], tokens: [] };
    blocks.push(cur);
  };
  tokens.forEach((t, i) => {
    const prevCue = i > 0 && tokens[i - 1] === CUE;
    if (t === BOS) open('prompt');
    else if (t === ROLE_MARKER.prompt && cur?.role !== 'prompt') open('prompt');
    else if (t === ROLE_MARKER.obs) open('obs');
    else if (t === ROLE_MARKER.summary) open('summary');
    else if (prevCue) open('act');
    cur!.ids.push(ids[i]);
    cur!.tokens.push(t);
  });
  return blocks;
}

function split(blocks: RefBlock[]) {
  const first = blocks.findIndex((b) => b.role === 'act');
  const head = first < 0 ? blocks : blocks.slice(0, first);
  const turns: RefBlock[][] = [];
  for (const b of first < 0 ? [] : blocks.slice(first)) {
    if (b.role === 'act') turns.push([b]);
    else turns[turns.length - 1].push(b);
  }
  return { head, turns };
}

const size = (bs: RefBlock[]) => bs.reduce((n, b) => n + b.ids.length, 0);
// A leading cue so that a first block which is an action reads as one.
const textView = (bs: RefBlock[]) => readView([CUE, ...bs.flatMap((b) => b.tokens)]);
/** The summary text the environment writes for removed blocks, derived here from their text. */
function summaryText(env: string, bs: RefBlock[]): string {
  if (env === 'lookup') return formatLookupSummary(readLookupState(textView(bs)) ?? { links: [], step: 0, hops: 0 });
  // collect: the fact of each page read (in the observation after `read P`) or summarized, once, in order.
  const facts: string[] = [];
  let pending: string | null = null;
  for (const b of textView(bs)) {
    if (b.role === 'act') pending = /^read (\d+)/.exec(b.text)?.[1] ?? null;
    const found = [...b.text.matchAll(/page (\d+): code=([a-z])\./g)].filter(([, p]) => b.role === 'summary' || (b.role === 'obs' && p === pending));
    for (const [fact, page] of found) if (!facts.some((f) => f.startsWith(`page ${page}:`))) facts.push(fact);
    if (b.role !== 'act') pending = null;
  }
  return facts.length ? facts.join(' ') : 'nothing read.';
}
let summaryEnv = 'lookup';
const summaryOf = (bs: RefBlock[]) => [ROLE_MARKER.summary, ...byteTokenizer.encode(summaryText(summaryEnv, bs)), CUE];
/** Kept ids as numbers, inserted tokens as { v }. */
type Item = number | { v: number };
const keep = (bs: RefBlock[]): Item[] => bs.flatMap((b) => b.ids);
const insert = (tokens: number[]): Item[] => tokens.map((v) => ({ v }));
const promptBody = (p: RefBlock): Item[] => (p.tokens.at(-1) === CUE ? p.ids.slice(0, -1) : p.ids);

/** The new view a budget editor must produce on `pre`, or null when it must not fire. */
function referenceBeforeDecode(spec: EditorSpec, pre: RefBlock[]): Item[] | null {
  if (spec.kind === 'none' || spec.kind === 'fold') return null;
  let length = size(pre);
  if (length <= spec.budget) return null;
  const { head, turns } = split(pre);
  if (spec.kind === 'window') {
    let drop = 0;
    while (length > spec.budget && turns.length - drop > spec.keepTurns) length -= size(turns[drop++]);
    return drop === 0 ? null : [...keep(head), ...keep(turns.slice(drop).flat())];
  }
  if (spec.kind === 'compact') {
    if (turns.length <= spec.keepTurns) return null;
    const cut = turns.length - spec.keepTurns;
    return [...promptBody(head[0]), ...insert(summaryOf([...head.slice(1), ...turns.slice(0, cut).flat()])), ...keep(turns.slice(cut).flat())];
  }
  // stack: pop the oldest envelopes outside the last keepTurns turns while over budget.
  const out: Item[] = [...keep(head)];
  let popped = 0;
  turns.forEach((turn, i) => {
    turn.forEach((b, j) => {
      const eligible = i < turns.length - spec.keepTurns && b.role === 'obs' && b.ids.length > 1 && length > spec.budget;
      const replacement = !eligible ? [] : spec.summarize ? summaryOf([turn[j - 1], b]) : [CUE];
      if (eligible && replacement.length < b.ids.length) {
        out.push(...(spec.summarize ? insert(replacement) : [b.ids.at(-1)!]));
        length -= b.ids.length - replacement.length;
        popped++;
      } else out.push(...b.ids);
    });
  });
  return popped === 0 ? null : out;
}

/** What the fold editor must do after `pre` (ending with a fold action): the new view, or the refusal. */
function referenceFold(spec: EditorSpec & { kind: 'fold' }, pre: RefBlock[]): Item[] | 'refused' {
  const { head, turns } = split(pre);
  const fold = turns.pop()!;
  if (turns.length <= spec.keepTurns) return 'refused';
  const cut = turns.length - spec.keepTurns;
  const summary = fold[0].tokens.slice('fold '.length, -1);
  return [...promptBody(head[0]), ...insert([ROLE_MARKER.summary, ...summary, CUE]), ...keep(turns.slice(cut).flat())];
}

function itemsOf(ids: readonly number[], preIds: ReadonlySet<number>, rollout: Rollout): Item[] {
  return ids.map((id) => (preIds.has(id) ? id : { v: rollout.tokens[id] }));
}

function viewOf(rollout: Rollout, ids: ArrayLike<number>): RefBlock[] {
  const list = Array.from(ids);
  return blocksOf(
    list,
    list.map((id) => rollout.tokens[id]),
  );
}

const isFold = (tokens: readonly number[]) => byteTokenizer.decode(tokens).startsWith('fold ') && tokens.at(-1) === NEWLINE;

/**
 * Checks one episode against the reference; returns the number of edits it checked. Every decode's
 * pre-edit view is read from the rollout's tree (branch edit-1), not from the harness.
 */
function checkEditor(spec: EditorSpec, result: EpisodeResult): number {
  summaryEnv = (result.rollout.meta as { env: string }).env;
  verifyEpisode(result);
  const rollout = validateRollout(result.rollout, { file: result.rollout.id });
  const tree = deriveTree(rollout);
  const edits = result.rollout.events.filter((e): e is EditEventJson => e.op === 'edit');
  expect(edits).toHaveLength(result.K);
  for (const e of edits) {
    // Keep ranges are maximal: two consecutive keeps never continue each other.
    e.view.forEach((p, i) => {
      const q = e.view[i + 1];
      if (q && 'keep' in p && 'keep' in q) expect(q.keep[0]).not.toBe(p.keep[1]);
    });
  }
  let checked = 0;
  result.decodes.forEach((d, step) => {
    const pre = d.edit === null ? d.viewIds : Array.from(tree.branchIds(d.edit - 1));
    expect(d.lengthBefore).toBe(pre.length);
    const preBlocks = viewOf(rollout, pre);
    const actual = itemsOf(d.viewIds, new Set(pre), rollout);
    if (spec.kind !== 'fold') {
      const want = referenceBeforeDecode(spec, preBlocks);
      if (want === null) expect(d.edit, `decode ${step}: must not fire`).toBeNull();
      else {
        expect(d.edit, `decode ${step}: must fire`).not.toBeNull();
        expect(actual).toEqual(want);
        checked++;
      }
      return;
    }
    const prev = result.decodes[step - 1];
    if (!prev || !isFold(prev.actTokens)) {
      expect(d.edit, `decode ${step}: no fold before it`).toBeNull();
      return;
    }
    const foldPre = [...prev.viewIds, ...prev.actIds];
    const want = referenceFold(spec, viewOf(rollout, foldPre));
    if (want === 'refused') {
      expect(d.edit).toBeNull();
      const obs = byteTokenizer.decode(d.viewTokens.slice(foldPre.length));
      expect(obs).toBe(`<obs>${FOLD_REFUSED}<act>`);
    } else {
      expect(d.edit).not.toBeNull();
      expect(Array.from(tree.branchIds(d.edit! - 1))).toEqual(foldPre);
      expect(itemsOf(d.viewIds, new Set(foldPre), rollout)).toEqual(want);
      checked++;
    }
  });
  return checked;
}

async function expertEpisodes(kind: EditorKind, seeds: number, env: Env = createLookupEnv(), overrides = {}) {
  const spec = editorSpec(kind, overrides);
  const policy = createExpertPolicy(env);
  const results: EpisodeResult[] = [];
  for (let seed = 0; seed < seeds; seed++) results.push(await runEpisode(env, createEditor(spec), policy, seed));
  return { spec, results };
}

describe('editors on expert rollouts, default task and budgets', () => {
  // Default task: prompt 53 tokens, each lookup turn 11 + 97 = 108, the answer 11; no edit: 388.
  const expected: Record<EditorKind, { K: number; L: number; maxView: number }> = {
    none: { K: 0, L: 388, maxView: 377 },
    window: { K: 2, L: 388, maxView: 161 },
    compact: { K: 2, L: 452, maxView: 197 },
    stack: { K: 2, L: 442, maxView: 237 },
    fold: { K: 2, L: 564, maxView: 305 },
  };
  for (const kind of Object.keys(expected) as EditorKind[]) {
    it(`${kind}: fires exactly when its rule says, with the reference's view, K=${expected[kind].K} on every seed`, async () => {
      const { spec, results } = await expertEpisodes(kind, 40);
      for (const r of results) {
        expect(checkEditor(spec, r)).toBe(expected[kind].K);
        expect(r.K).toBe(expected[kind].K);
        expect(r.outcome.em).toBe(1);
        const tape = validateRollout(r.rollout, { file: 'x' }).length;
        expect(tape).toBe(expected[kind].L);
        expect(Math.max(...r.decodes.map((d) => d.viewIds.length))).toBe(expected[kind].maxView);
      }
    });
  }

  for (const kind of Object.keys(expected) as EditorKind[]) {
    it(`${kind} on collect: fires exactly when its rule says, K=${expected[kind].K} on every seed, EM 1`, async () => {
      // Two-digit page numbers: observations as long as lookup's, so the same budgets fire as often.
      const { spec, results } = await expertEpisodes(kind, 40, createCollectEnv({ pool: 20 }));
      for (const r of results) {
        expect(checkEditor(spec, r)).toBe(expected[kind].K);
        expect(r.outcome.em).toBe(1);
      }
    });
  }

  it('none: every view is a prefix of the final walk (one branch, nothing dropped)', async () => {
    const { results } = await expertEpisodes('none', 5);
    for (const r of results) {
      const tree = deriveTree(validateRollout(r.rollout, { file: 'x' }));
      expect(tree.figures).toMatchObject({ K: 0, branches: 1, droppedTargets: 0, divergingLeaves: 0 });
      for (const d of r.decodes) expect(Array.from(tree.finalWalk.slice(0, d.viewIds.length))).toEqual(d.viewIds);
    }
  });

  it('window, compact, stack and fold leave diverging leaves (targets scored differently by naive replay)', async () => {
    for (const kind of ['window', 'compact', 'stack', 'fold'] as const) {
      const { results } = await expertEpisodes(kind, 3);
      for (const r of results) {
        const tree = deriveTree(validateRollout(r.rollout, { file: 'x' }));
        expect(tree.figures.divergingLeaves, kind).toBeGreaterThan(0);
      }
    }
  });

  it('the default budgets fire on the first decode over them and not before', async () => {
    const { results } = await expertEpisodes('compact', 1);
    const [r] = results;
    // 53, 161, 269 tokens at decodes 0..2: compaction (budget 240) fires at decode 2 first.
    expect(r.decodes.map((d) => [d.lengthBefore, d.edit])).toEqual([
      [53, null],
      [161, null],
      [269, 1],
      [295, 2],
    ]);
  });
});

describe('editors with other budgets, keepTurns and difficulty (property)', () => {
  const specs = fc.oneof(
    fc.constant(editorSpec('none')),
    fc.record({ kind: fc.constant('window' as const), budget: fc.integer({ min: 30, max: 500 }), keepTurns: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ kind: fc.constant('compact' as const), budget: fc.integer({ min: 30, max: 500 }), keepTurns: fc.integer({ min: 0, max: 3 }) }),
    fc.record({
      kind: fc.constant('stack' as const),
      budget: fc.integer({ min: 30, max: 500 }),
      keepTurns: fc.integer({ min: 0, max: 3 }),
      summarize: fc.boolean(),
    }),
    fc.record({ kind: fc.constant('fold' as const), budget: fc.integer({ min: 30, max: 500 }), keepTurns: fc.integer({ min: 0, max: 3 }) }),
  );
  const envs = fc.oneof(
    fc.record({
      id: fc.constant('lookup' as const),
      hops: fc.integer({ min: 1, max: 5 }),
      distractors: fc.integer({ min: 0, max: 4 }),
      filler: fc.integer({ min: 0, max: 150 }),
    }),
    fc.record({
      id: fc.constant('collect' as const),
      pages: fc.integer({ min: 1, max: 5 }),
      decoys: fc.integer({ min: 0, max: 4 }),
      filler: fc.integer({ min: 0, max: 150 }),
    }),
  );

  it('rollouts of the expert (noisy or not) validate, re-derive, and match the reference at every decode', async () => {
    let edits = 0;
    let contextStops = 0;
    const kinds = new Set<string>();
    const envIds = new Set<string>();
    await fc.assert(
      fc.asyncProperty(specs, envs, fc.nat(10_000), fc.constantFrom(0, 0, 0.3), async (spec, envSpec, seed, noise) => {
        const env = createEnv(envSpec);
        envIds.add(envSpec.id);
        const r = await runEpisode(env, createEditor(spec), createExpertPolicy(env, { noise }), seed);
        edits += checkEditor(spec, r);
        if (r.K > 0) kinds.add(spec.kind);
        // Only a window or a summary-less stack that keeps no turn loses the latest observation
        // (lookup) or the expert's latest note (collect).
        const lossy = spec.kind !== 'none' && spec.keepTurns === 0 && (spec.kind === 'window' || (spec.kind === 'stack' && !spec.summarize));
        // An episode that outgrows the model's context (a view, or the tape: long filler) ends unanswered.
        if (r.stop === 'context' || r.stop === 'truncated') contextStops++;
        else if (noise === 0 && !lossy) expect(r.outcome.em).toBe(1);
      }),
      { numRuns: 300, seed: 7 },
    );
    expect(contextStops).toBeLessThan(30);
    expect(edits).toBeGreaterThan(150);
    expect([...kinds].sort()).toEqual(['compact', 'fold', 'stack', 'window']);
    expect([...envIds].sort()).toEqual(['collect', 'lookup']);
  });

  it('fold: a fold with no complete turn to fold is refused with an observation, not an edit', async () => {
    const env = createLookupEnv();
    const folder: Policy = {
      name: 'folder',
      start: () => ({
        act: async () => {
          const tokens = byteTokenizer.encode('fold nothing yet\n');
          return { tokens, logprobs: tokens.map(() => 0) };
        },
      }),
    };
    const spec = editorSpec('fold', { keepTurns: 0 });
    const r = await runEpisode(env, createEditor(spec), folder, 1, { maxTurns: 3 });
    // Decode 0 folds on the prompt alone: refused. Decode 1 folds that turn (keepTurns 0): an edit
    // whose summary is the policy's text. Decode 2 folds again, the view now holds no turn: refused.
    expect(checkEditor(spec, r)).toBe(1);
    expect(r.K).toBe(1);
    expect(byteTokenizer.decode(r.decodes[2].viewTokens)).toBe(`<bos><prompt>${env.reset(1).prompt}<summary>nothing yet<act>`);
    expect(r.stop).toBe('turns');
    expect(r.outcome.reward).toBe(0);
  });
});
