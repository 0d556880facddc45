// The playground slice over the rollout slice: each accepted change is shown at once (one view per
// change, the selected target kept while it is one), a refused change leaves the rollout and the view
// as they were and says why, undo and redo walk the changes, and the link code holds the rollout.
import { describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { generateRandomRollout } from '../../rollout/generate-random';
import { appendPiece, evictSpan, slideWindow } from '../core/playground';
import { rehearsalSteps } from '../core/rehearsal';
import { decodePlay } from '../url/playLink';
import { createPlaygroundSlice } from './playgroundSlice';
import { createRolloutSlice } from './rolloutSlice';
import type { WorkbenchState } from './types';
import { createViewSlice } from './viewSlice';

vi.mock('../persist/lastSet', () => ({ saveLastSet: vi.fn(async () => undefined), loadLastSet: vi.fn(async () => null) }));
vi.mock('../core/rehearsal', async (original) => {
  const real = await original<typeof import('../core/rehearsal')>();
  return { rehearsalSteps: vi.fn(real.rehearsalSteps) };
});
vi.mock('../protocol/parseClient', () => ({ StaleParseError: class extends Error {}, createParser: () => ({}) }));

function store() {
  return create<WorkbenchState>()((...a) => ({ ...createRolloutSlice(...a), ...createViewSlice(...a), ...createPlaygroundSlice(...a) }) as WorkbenchState);
}

describe('the playground slice', () => {
  it('shows each change at once, refuses with the reason, undoes and redoes, and links the rollout', async () => {
    const s = store();
    await s.getState().openPlayground('bytes');
    expect(s.getState().play?.rollout.events).toEqual([]);
    expect(s.getState().view).toBeNull(); // nothing to show yet
    expect(s.getState().playChange((r) => appendPiece(r, 'prompt', 'go'))).toBe(true);
    expect(s.getState().source).toEqual({ kind: 'playground', name: 'playground' });
    expect(s.getState().play?.rollout.events).toHaveLength(1);
    expect(s.getState().playChange((r) => appendPiece(r, 'act', 'abcd'))).toBe(true);
    expect(s.getState().view?.rollout.targets).toEqual(Int32Array.from([2, 3, 4, 5]));
    s.getState().selectTarget(4);

    // Refused: the view and the rollout stay, the reason is kept.
    const before = s.getState().view;
    expect(s.getState().playChange((r) => slideWindow(r, 6))).toBe(false);
    expect(s.getState().play?.refusal).toBe('the context holds 6 tokens: a window of 6 would evict nothing');
    expect(s.getState().view).toBe(before);

    // An edit: K 1, target 4 still selected; the refusal goes.
    expect(s.getState().playChange((r) => evictSpan(r, { from: 0, to: 1 }))).toBe(true);
    expect(s.getState().play?.refusal).toBeNull();
    expect(s.getState().view?.tree.K).toBe(1);
    expect(s.getState().selectedTarget).toBe(4);

    // Undo and redo show the states seen before: their very views, not derived again.
    const edited = s.getState().view;
    s.getState().playUndo();
    expect(s.getState().view?.tree.K).toBe(0);
    expect(s.getState().view).toBe(before);
    expect(s.getState().selectedTarget).toBe(4);
    expect(s.getState().play?.future).toHaveLength(1);
    s.getState().playRedo();
    expect(s.getState().view?.tree.K).toBe(1);
    expect(s.getState().view).toBe(edited);
    expect(s.getState().play?.past).toHaveLength(3);
    // A change made anew (the same edit, a new rollout) is derived anew.
    s.getState().playUndo();
    expect(s.getState().playChange((r) => evictSpan(r, { from: 0, to: 1 }))).toBe(true);
    expect(s.getState().view).not.toBe(edited);
    expect(s.getState().view?.tree.K).toBe(1);

    // The link code arrives a moment later and holds the rollout itself.
    await vi.waitFor(() => expect(s.getState().playLink?.code).toBeTruthy());
    expect(await decodePlay(s.getState().playLink!.code!)).toEqual(s.getState().play!.rollout);
    await expect(decodePlay('not*a*code')).rejects.toThrow("the link's playground rollout does not read");
  });

  it('rehearses each kind of edit at idle once it opens, and stops when the student edits first', async () => {
    const rehearsed = () => performance.getEntriesByName('mw:play-rehearsed').length;
    performance.clearMarks('mw:play-rehearsed');
    const rollout = generateRandomRollout({ seed: 500, tokens: 500, edits: 6, textRate: 0, id: 'play' });
    const s = store();
    await s.getState().openPlayground({ rollout });
    const view = s.getState().view;
    const started = performance.now();
    await vi.waitFor(() => expect(rehearsed()).toBe(1), { timeout: 10_000 });
    const took = performance.now() - started;
    // Only the rollout opened is shown: the rehearsal's edits are dropped.
    expect(s.getState().view).toBe(view);
    expect(s.getState().play?.past).toEqual([]);

    // An edit before the rehearsal ends stops it: its mark never comes.
    performance.clearMarks('mw:play-rehearsed');
    const t = store();
    await t.getState().openPlayground({ rollout });
    expect(t.getState().playChange((r) => slideWindow(r, 100))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 3 * took + 100));
    expect(rehearsed()).toBe(0);

    // A tree over 5,000 nodes is not rehearsed (its derivations would hold the page for long).
    const big = generateRandomRollout({ seed: 7, tokens: 3_000, edits: 20, textRate: 0, id: 'big' });
    const u = store();
    vi.mocked(rehearsalSteps).mockClear();
    await u.getState().openPlayground({ rollout: big });
    expect(u.getState().view?.tree.figures.packedLength).toBeGreaterThan(5_000);
    expect(rehearsalSteps).not.toHaveBeenCalled();
    await u.getState().openPlayground({ rollout });
    expect(rehearsalSteps).toHaveBeenCalledTimes(1);
  });
});
