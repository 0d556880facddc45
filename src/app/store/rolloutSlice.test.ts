import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import type { RolloutJson } from '../../rollout/format';
import { createRolloutSlice } from './rolloutSlice';
import { createViewSlice } from './viewSlice';
import type { WorkbenchState } from './types';

const saveLastSet = vi.hoisted(() => vi.fn(async () => undefined));
vi.mock('../persist/lastSet', () => ({ saveLastSet }));
/** A parse that stays in flight until the test lets it finish (the worker does not run in Node). */
const parse = vi.hoisted(() => ({ finish: null as null | ((outcome: unknown) => void) }));
vi.mock('../protocol/parseClient', () => ({
  StaleParseError: class extends Error {},
  createParser: () => ({
    parse: () => new Promise((resolve) => (parse.finish = resolve)),
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
