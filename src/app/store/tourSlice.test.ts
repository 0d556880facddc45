// The first-visit offer of the tour is answered for good: a tour taken from anywhere, or ended,
// hides the "New here?" line in this store and in the next page's (localStorage, as the page keeps it).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { create } from 'zustand';
import { createTourSlice } from './tourSlice';
import type { WorkbenchState } from './types';

function memoryStorage(): Storage {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (k) => map.get(k) ?? null,
    key: (i) => [...map.keys()][i] ?? null,
    removeItem: (k) => void map.delete(k),
    setItem: (k, v) => void map.set(k, String(v)),
  };
}

const store = () => create<WorkbenchState>()((...a) => createTourSlice(...a) as WorkbenchState);

describe('the tour offer', () => {
  beforeEach(() => vi.stubGlobal('localStorage', memoryStorage()));
  afterEach(() => vi.unstubAllGlobals());

  it('shows on a first visit and stays gone once a tour was ended (a tour opened from a link, say)', () => {
    const first = store();
    expect(first.getState().tourOffer).toBe(true);
    first.setState({ tourStep: 10 }); // as the URL sync opens a step
    first.getState().endTour();
    expect(first.getState().tourOffer).toBe(false);
    expect(store().getState().tourOffer).toBe(false); // the next page load
  });
  it('stays gone once dismissed by ×', () => {
    store().getState().dismissTourOffer();
    expect(store().getState().tourOffer).toBe(false);
  });
});
