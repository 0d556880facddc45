// The harness's own live view: blocks of physical ids with their token values, and the one way to
// rewrite it, an edit plan (keep whole blocks or parts of them, insert new pieces), which becomes a
// docs/rollout-format.md `edit` event with maximal `keep` ranges. Editors build plans; only this file assigns ids.

import type { EditEventJson, InsertRole, ViewPieceJson } from '../rollout/format';
import { ACT_CUE, endsWithCue } from './framing';

export type BlockRole = 'prompt' | 'obs' | 'act' | 'summary';

/** A piece of the live view: physical ids first .. first + tokens.length - 1, contiguous. */
export interface Block {
  readonly role: BlockRole;
  readonly first: number;
  readonly tokens: readonly number[];
  /** A harness piece that ends with the cue (`<act>`, or a chat template's assistant header; never true for an action). */
  readonly cue: boolean;
  /** Tokens of that cue at the end of the block (0 without one). */
  readonly cueLength: number;
  /** Environment notes of what this block holds (an observation's own, a summary's covered ones). */
  readonly notes: readonly unknown[];
}

export interface LiveView {
  readonly blocks: readonly Block[];
  /** Number of tokens in the view. */
  readonly length: number;
}

export type PlanPiece = { keep: Block; from?: number; to?: number } | { insert: { role: InsertRole; tokens: readonly number[]; notes: readonly unknown[] } };

/** The new live view, piece by piece, in order. */
export type EditPlan = readonly PlanPiece[];

/** A block; `cue` is the framing's (docs: framing.ts), the byte tokenizer's `<act>` unless given. */
export function createBlock(
  role: BlockRole,
  first: number,
  tokens: readonly number[],
  notes: readonly unknown[] = [],
  cue: readonly number[] = [ACT_CUE],
): Block {
  if (tokens.length === 0) throw new Error(`harness: empty ${role} block`);
  const cued = role !== 'act' && endsWithCue(tokens, cue);
  return { role, first, tokens, cue: cued, cueLength: cued ? cue.length : 0, notes };
}

export function createLiveView(blocks: readonly Block[]): LiveView {
  return { blocks, length: blocks.reduce((n, b) => n + b.tokens.length, 0) };
}

export function viewIds(view: LiveView): number[] {
  const out: number[] = [];
  for (const b of view.blocks) for (let i = 0; i < b.tokens.length; i++) out.push(b.first + i);
  return out;
}

export function viewTokens(view: LiveView): number[] {
  const out: number[] = [];
  for (const b of view.blocks) for (const t of b.tokens) out.push(t);
  return out;
}

/**
 * The view as a head (blocks before the first action: the prompt, and any summary after it) and
 * turns (an action with the harness blocks that follow it, up to the next action).
 */
export function splitTurns(view: LiveView): { head: Block[]; turns: Block[][] } {
  const head: Block[] = [];
  const turns: Block[][] = [];
  for (const b of view.blocks) {
    if (b.role === 'act') turns.push([b]);
    else if (turns.length === 0) head.push(b);
    else turns[turns.length - 1].push(b);
  }
  return { head, turns };
}

export function keepAll(blocks: readonly Block[]): PlanPiece[] {
  return blocks.map((keep) => ({ keep }));
}

/**
 * The prompt without its trailing cue: a summary that follows the prompt brings its own cue, so
 * the prompt's must go (otherwise the view would hold a cue followed by a harness piece).
 */
export function keepWithoutCue(block: Block): PlanPiece {
  return block.cue ? { keep: block, from: 0, to: block.tokens.length - block.cueLength } : { keep: block };
}

export interface AppliedEdit {
  view: LiveView;
  event: EditEventJson;
  /** First position where the new view's physical ids differ from the old view's. */
  firstChanged: number;
  /** Next free physical id. */
  nextId: number;
}

/**
 * Applies a plan: checks that kept parts are live, in live order and not repeated, creates the
 * inserted ids from `nextId` in piece order (docs/rollout-format.md creation order), merges kept parts that are
 * adjacent both in the view and in id into one `keep` range, and refuses a plan that changes nothing.
 */
export function applyPlan(view: LiveView, plan: EditPlan, nextId: number, cue: readonly number[] = [ACT_CUE]): AppliedEdit {
  const order = new Map<Block, number>();
  view.blocks.forEach((b, i) => order.set(b, i));
  const blocks: Block[] = [];
  const pieces: ViewPieceJson[] = [];
  let open: [number, number] | null = null;
  let lastBlock = -1;
  let lastTo = 0;
  let id = nextId;
  for (const piece of plan) {
    if ('insert' in piece) {
      const { role, tokens, notes } = piece.insert;
      blocks.push(createBlock(role, id, tokens.slice(), notes, cue));
      id += tokens.length;
      pieces.push({ insert: { role, tokens: tokens.slice() } });
      open = null;
      continue;
    }
    const block = piece.keep;
    const at = order.get(block);
    if (at === undefined) throw new Error(`harness: plan keeps a ${block.role} block (ids from ${block.first}) that is not live`);
    const from = piece.from ?? 0;
    const to = piece.to ?? block.tokens.length;
    if (!(Number.isInteger(from) && Number.isInteger(to) && 0 <= from && from < to && to <= block.tokens.length)) {
      throw new Error(`harness: plan keeps [${from}, ${to}) of a ${block.tokens.length}-token ${block.role} block`);
    }
    if (at < lastBlock || (at === lastBlock && from < lastTo)) throw new Error('harness: plan keeps blocks out of live order or twice');
    lastBlock = at;
    lastTo = to;
    const whole = from === 0 && to === block.tokens.length;
    blocks.push(whole ? block : createBlock(block.role, block.first + from, block.tokens.slice(from, to), from === 0 ? block.notes : [], cue));
    const a = block.first + from;
    const b = block.first + to;
    if (open && open[1] === a) open[1] = b;
    else {
      open = [a, b];
      pieces.push({ keep: open });
    }
  }

  const next = createLiveView(blocks);
  const oldIds = viewIds(view);
  const newIds = viewIds(next);
  let firstChanged = 0;
  while (firstChanged < oldIds.length && firstChanged < newIds.length && oldIds[firstChanged] === newIds[firstChanged]) firstChanged++;
  if (firstChanged === oldIds.length && firstChanged === newIds.length) throw new Error('harness: an edit must change the live view');
  return { view: next, event: { op: 'edit', view: pieces }, firstChanged, nextId: id };
}
