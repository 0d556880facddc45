import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { validateRollout } from '../../rollout';
import type { RolloutJson } from '../../rollout/format';
import { deriveView } from '../core/derived';
import { planIndex } from '../core/methodViews';
import { evictingRollout } from '../../testing/evicting';
import { createRolloutSlice, nextTask, STAGED_NODES, STAGED_PANELS } from './rolloutSlice';
import { createViewSlice } from './viewSlice';
import type { WorkbenchState } from './types';

const saveLastSet = vi.hoisted(() => vi.fn(async () => undefined));
vi.mock('../persist/lastSet', () => ({ saveLastSet }));
/** A parse that stays in flight until the test lets it finish (the worker does not run in Node). */
const parse = vi.hoisted(() => ({ finish: null as null | ((outcome: unknown) => void) }));
/** The worker's answer to a `rollout` request (set, index, maxPacked), when the page asks again. */
const sizedRollout = vi.hoisted(() => vi.fn(async (_set: number, _index: number, _maxPacked: number): Promise<unknown> => undefined));
vi.mock('../protocol/parseClient', () => ({
  StaleParseError: class extends Error {},
  createParser: () => ({
    parse: () => new Promise((resolve) => (parse.finish = resolve)),
    sizedRollout,
  }),
}));

const WORKED = JSON.parse(readFileSync(fileURLToPath(new URL('../../../public/examples/worked-example.json', import.meta.url)), 'utf8')) as RolloutJson;

function store() {
  return create<WorkbenchState>()((...a) => ({ ...createRolloutSlice(...a), ...createViewSlice(...a) }) as WorkbenchState);
}

describe('showRollout: a rollout the page holds as JSON', () => {
  beforeEach(() => {
    saveLastSet.mockClear();
  });

  it('is validated, derived and shown in one store update, without loading phases', () => {
    const s = store();
    const updates: Partial<WorkbenchState>[] = [];
    s.subscribe((state) => updates.push({ loading: state.loading, view: state.view }));
    expect(s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false })).toBe(true);
    expect(updates).toHaveLength(1);
    expect(updates[0].loading).toBeNull();
    const state = s.getState();
    expect(state.view?.rollout.id).toBe('worked-example');
    expect(state.source).toEqual({ kind: 'file', name: 'w.json' });
    expect(state.rollouts).toEqual([{ id: 'worked-example', length: state.view!.rollout.length, K: 2, reward: 1 }]);
    expect(state.selectedTarget).not.toBeNull();
    expect(state.view!.rollout.isTarget[state.selectedTarget!]).toBe(1);
    expect(saveLastSet).not.toHaveBeenCalled();
  });

  it('keeps a requested target, and the rollout in IndexedDB unless told not to', async () => {
    const s = store();
    s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { target: 13 });
    expect(s.getState().selectedTarget).toBe(13);
    expect(saveLastSet).toHaveBeenCalledTimes(1);
    const [kind, name, blob] = saveLastSet.mock.calls[0] as unknown as [string, string, Blob];
    expect([kind, name]).toEqual(['file', 'w.json']);
    expect(JSON.parse(await blob.text())).toEqual(WORKED);
  });

  it('refuses a tree above the limit with its exact N_packed (counted only when (K + 1) · L is over the limit)', () => {
    const s = store();
    s.getState().setMaxPacked(20); // the worked example: L 17, K 2, N_packed 21; the bound 51
    expect(s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false })).toBe(false);
    expect(s.getState().loadError).toMatch(/^rollout "worked-example": N_packed 21 is above the limit of 20 rows/);
    s.getState().setMaxPacked(21);
    expect(s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false })).toBe(true);
    expect(s.getState().view?.tree.figures.packedLength).toBe(21);
  });

  it("refuses a rollout that does not validate with the validator's message, keeping the view", () => {
    const s = store();
    s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false });
    const before = s.getState().view;
    const bad = structuredClone(WORKED);
    (bad.events[7] as { view: unknown[] }).view[0] = { keep: [4, 6] }; // ids 4, 5 were evicted by edit 1
    expect(s.getState().showRollout(bad, { kind: 'file', name: 'bad.json' })).toBe(false);
    expect(s.getState().loadError).toMatch(/^bad\.json: event 7: .*id 4 is not live/);
    expect(s.getState().view).toBe(before);
    expect(s.getState().source).toEqual({ kind: 'file', name: 'w.json' });
    expect(saveLastSet).not.toHaveBeenCalled();
  });

  it('wins over a file still being parsed', async () => {
    const s = store();
    const opening = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'slow.json' });
    expect(s.getState().loading?.fileName).toBe('slow.json');
    s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false });
    expect(s.getState().loading).toBeNull();
    parse.finish!({ set: 1, summaries: [], index: 0, rollout: null, readMs: 0, validateMs: 0 });
    expect(await opening).toBe(false);
    expect(s.getState().source).toEqual({ kind: 'file', name: 'w.json' });
    expect(s.getState().view?.rollout.id).toBe('worked-example');
  });
});

describe('openBlob with a model folder tokenizer', () => {
  it('asks for the folder in one line when its hf: tokenizer is not loaded, keeping the view and parsing nothing', async () => {
    const s = store();
    s.getState().showRollout(WORKED, { kind: 'file', name: 'w.json' }, { persist: false });
    parse.finish = null;
    const opened = await s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'session.jsonl' }, { tokenizer: 'hf:qwen3' });
    expect(opened).toBe(false);
    expect(parse.finish).toBeNull();
    expect(s.getState().loadError).toBe(
      'session.jsonl: imported with hf:qwen3, the tokenizer of a model folder that is not loaded: open the folder again ("Open model folder…")',
    );
    expect(s.getState().view?.rollout.id).toBe('worked-example');
    expect(s.getState().loading).toBeNull();
  });
});

describe('openBlob: a file parsed and derived in the worker', () => {
  const rollout = () => validateRollout(WORKED, { file: 'w.json' });
  const outcome = (derived: boolean) => {
    const r = rollout();
    return { set: 4, index: 0, summaries: [{ id: r.id, length: r.length, K: r.K }], rollout: r, nPacked: 21, derived: derived ? deriveView(r) : null };
  };
  const done = { readMs: 1, validateMs: 2, deriveMs: 3, report: { text: '', skipped: 0, problems: 0 } };

  beforeEach(() => sizedRollout.mockClear());

  it("shows the worker's view data in one update after the loading phases, its plans as posted", async () => {
    const s = store();
    const opening = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'w.json' }, { persist: false });
    const posted = { ...outcome(true), ...done };
    const updates: Partial<WorkbenchState>[] = [];
    s.subscribe((state) => updates.push({ loading: state.loading, view: state.view }));
    parse.finish!(posted);
    expect(await opening).toBe(true);
    expect(updates).toHaveLength(1);
    expect(updates[0].loading).toBeNull();
    const { view, loadTimings, selectedTarget } = s.getState();
    expect(view?.tree.figures).toMatchObject({ K: 2, packedLength: 21, divergingLeaves: 2 });
    expect(view?.tree.livePrefix(13)).toHaveLength(8);
    expect(planIndex(view!, 'sdcc').plan).toBe(posted.derived!.plans.sdcc);
    expect(loadTimings).toEqual({ read: 1, validate: 2, derive: 3 });
    expect(selectedTarget).toBe(view!.tree.divergingLeaves[0]);
    expect(sizedRollout).not.toHaveBeenCalled();
  });

  it('refuses a tree above the limit with N_packed, and asks again for one the raised limit now allows', async () => {
    const s = store();
    s.getState().setMaxPacked(20);
    let opening = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'w.json' }, { persist: false });
    parse.finish!({ ...outcome(false), ...done });
    expect(await opening).toBe(false);
    expect(s.getState().loadError).toMatch(/^w\.json: rollout "worked-example": N_packed 21 is above the limit of 20 rows/);
    expect(sizedRollout).not.toHaveBeenCalled();

    // Sent under a limit of 20, shown under 30: the rollout is derived on a second request.
    opening = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'w.json' }, { persist: false });
    s.getState().setMaxPacked(30);
    sizedRollout.mockResolvedValueOnce({ ...outcome(true), deriveMs: 1 });
    parse.finish!({ ...outcome(false), ...done });
    expect(await opening).toBe(true);
    expect(sizedRollout).toHaveBeenCalledWith(4, 0, 30);
    expect(s.getState().view?.tree.figures.packedLength).toBe(21);
    expect(s.getState().loadError).toBeNull();
  });

  it('a large tree (N_packed 100,489, over STAGED_NODES): the three context panes and the tree panel take it one per task, a small one all at once', async () => {
    const s = store();
    const big = validateRollout(JSON.parse(evictingRollout(317, 'big')), { file: 'big.json' });
    const opening = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'big.json' }, { persist: false });
    const stages: number[] = [];
    s.subscribe((state, before) => state.viewStage !== before.viewStage && stages.push(state.viewStage));
    parse.finish!({ set: 5, index: 0, summaries: [], rollout: big, nPacked: 100_489, derived: deriveView(big), ...done });
    expect(await opening).toBe(true);
    expect(STAGED_NODES).toBe(100_000);
    expect(s.getState().view?.tree.figures.packedLength).toBe(100_489);
    expect(s.getState().viewStage).toBe(0);
    // Each await of a task lets one more panel (the live pane, Naive-Compressed's, Naive-Full's, then the tree) take the view.
    expect(STAGED_PANELS).toEqual(['context-live', 'context-naive-compressed', 'context-naive-full', 'tree']);
    for (let stage = 1; stage <= STAGED_PANELS.length; stage++) {
      await nextTask();
      expect(s.getState().viewStage).toBe(stage);
    }
    expect(stages).toEqual([0, 1, 2, 3, 4]);
    // The worked example (21 nodes): every panel in the one update.
    const small = s.getState().openBlob(new Blob(['{}']), { kind: 'file', name: 'w.json' }, { persist: false });
    parse.finish!({ ...outcome(true), ...done });
    expect(await small).toBe(true);
    expect(s.getState().viewStage).toBe(STAGED_PANELS.length);
  });
});
