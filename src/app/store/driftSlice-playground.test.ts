// The drift slice in the playground: while a change is scored, the figures before it stay (stale)
// and go when the new ones arrive; elsewhere (another rollout opened) nothing stale is kept.
import { describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import type { DriftData } from '../core/drift';
import { appendPiece } from '../core/playground';
import { createDriftSlice } from './driftSlice';
import { createPlaygroundSlice } from './playgroundSlice';
import { createRolloutSlice } from './rolloutSlice';
import type { WorkbenchState } from './types';
import { createViewSlice } from './viewSlice';

/** Scorings the test finishes by hand, and the drift each finished one makes (numbered by finish). */
const pending = vi.hoisted(() => ({ finish: [] as (() => void)[], made: 0 }));
vi.mock('../persist/lastSet', () => ({ saveLastSet: vi.fn(async () => undefined), loadLastSet: vi.fn(async () => null) }));
vi.mock('../protocol/parseClient', () => ({ StaleParseError: class extends Error {}, createParser: () => ({}) }));
vi.mock('./clients', () => ({
  rolloutWorker: () => ({}),
  scoringWorker: () => ({ score: () => new Promise((resolve) => pending.finish.push(() => resolve({ scores: [] }))) }),
}));
vi.mock('../core/drift', async (original) => ({
  ...(await original<object>()),
  driftOf: () => ({ id: ++pending.made, methods: [] }) as unknown as DriftData,
}));

function store() {
  return create<WorkbenchState>()(
    (...a) => ({ ...createRolloutSlice(...a), ...createViewSlice(...a), ...createDriftSlice(...a), ...createPlaygroundSlice(...a) }) as WorkbenchState,
  );
}
const idOf = (d: DriftData | null) => (d as unknown as { id: number } | null)?.id ?? null;

describe('the drift of a playground change', () => {
  it('keeps the figures before it, stale, until its own arrive', async () => {
    const s = store();
    s.setState({ model: { name: 'm', description: '', adapter: '', kind: 'gpt2', tokenizer: null, restored: false, key: 1 } });
    await s.getState().openPlayground('bytes');
    s.getState().playChange((r) => appendPiece(r, 'prompt', 'go'));
    void s.getState().scoreView();
    pending.finish.shift()!();
    await vi.waitFor(() => expect(idOf(s.getState().drift)).toBe(1));
    expect(s.getState().staleDrift).toBeNull();

    // A change: scored again; the old figures stay as stale meanwhile, through a second quick change too.
    s.getState().playChange((r) => appendPiece(r, 'act', 'ab'));
    void s.getState().scoreView();
    expect(s.getState().drift).toBeNull();
    expect(idOf(s.getState().staleDrift)).toBe(1);
    s.getState().playChange((r) => appendPiece(r, 'act', 'cd'));
    void s.getState().scoreView();
    expect(idOf(s.getState().staleDrift)).toBe(1);
    pending.finish.shift()!(); // the first change's scores: no longer the shown rollout's
    pending.finish.shift()!();
    await vi.waitFor(() => expect(s.getState().drift).not.toBeNull());
    expect(s.getState().staleDrift).toBeNull();
    expect(s.getState().scoring).toBeNull();

    // Another rollout, not a playground change: nothing stale.
    s.getState().showRollout(s.getState().play!.rollout, { kind: 'file', name: 'x.json' }, { persist: false });
    void s.getState().scoreView();
    expect(s.getState().staleDrift).toBeNull();
  });
});
