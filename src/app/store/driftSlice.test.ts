// The scoring model kept from the last visit: a model folder too large to keep in the browser comes back
// as a line asking to pick it again, not as a half-loaded model (the workers do not run in Node).
import 'fake-indexeddb/auto';
import { describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { saveScoringFolder } from '../persist/checkpoint';
import { createDriftSlice } from './driftSlice';
import type { WorkbenchState } from './types';

const scorer = vi.hoisted(() => ({ loadFolder: vi.fn(), load: vi.fn() }));
vi.mock('../protocol/scoreClient', () => ({
  createScorer: () => scorer,
  StaleScoreError: class extends Error {},
  ScoreCancelledError: class extends Error {},
}));

describe('restoreCheckpoint', () => {
  it('asks to pick a folder again that was too large to keep, loading nothing; a second call shares the first', async () => {
    const files = new Map([['model.safetensors', new Blob([new Uint8Array(3 * 2 ** 20)])]]);
    await saveScoringFolder('qwen3-4b', files, 2 ** 20);
    const store = create<WorkbenchState>()((...a) => ({ ...createDriftSlice(...a) }) as WorkbenchState);
    const first = store.getState().restoreCheckpoint();
    expect(store.getState().restoreCheckpoint()).toBe(first);
    await first;
    expect(store.getState().modelNotice).toBe(
      'model folder qwen3-4b (3.0 MiB) was not kept in this browser (larger than it keeps): pick the folder again with "Open model folder…"',
    );
    expect(store.getState().model).toBeNull();
    expect(scorer.loadFolder).not.toHaveBeenCalled();
  });
});
