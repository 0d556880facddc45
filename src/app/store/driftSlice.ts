// Drift slice: the model loaded into the scoring worker (a user's GPT-2 checkpoint, or the demo model
// the app ships), kept in IndexedDB so a reload loads it again, and the drift of the shown rollout
// under each method, recomputed whenever the shown rollout changes (or the window of the panel); the
// scoring's progress in tokens (what the bar and its ETA follow), and its cancel. In the playground, the
// last figures stay (marked stale) while a change is scored, until the new ones arrive.
import { driftOf, driftRow } from '../core/drift';
import { fetchShipped } from '../load/shipped';
import { DEMO_MODEL } from '../../run/config';
import { loadScoringCheckpoint, saveScoringCheckpoint } from '../persist/checkpoint';
import { ScoreCancelledError, StaleScoreError } from '../protocol/scoreClient';
import { scoringWorker } from './clients';
import type { DriftSlice, Slice } from './types';

let loads = 0;

export const createDriftSlice: Slice<DriftSlice> = (set, get) => ({
  model: null,
  modelLoading: null,
  drift: null,
  driftView: null,
  staleDrift: null,
  scoring: null,
  scoringCancelled: false,
  driftError: null,
  driftWindow: null,

  async openCheckpoint(file, name, options = {}) {
    const key = ++loads;
    set({ modelLoading: name, driftError: null });
    try {
      const loaded = await scoringWorker().load(await file.arrayBuffer(), name);
      if (key !== loads) return false; // another checkpoint was asked for meanwhile
      set({
        model: { name, description: loaded.description, adapter: loaded.adapter, restored: options.restored === true, key },
        modelLoading: null,
        drift: null,
        driftView: null,
        staleDrift: null,
      });
    } catch (error) {
      if (key === loads) set({ modelLoading: null, driftError: `${name}: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
    if (options.persist !== false) void saveScoringCheckpoint(name, file).catch(() => undefined);
    await get().scoreView();
    return true;
  },

  async useDemoModel() {
    set({ modelLoading: DEMO_MODEL.name, driftError: null });
    let blob: Blob;
    try {
      blob = await (await fetchShipped(DEMO_MODEL.file)).blob();
    } catch (error) {
      set({ modelLoading: null, driftError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    return get().openCheckpoint(blob, DEMO_MODEL.name);
  },

  async restoreCheckpoint() {
    const stored = await loadScoringCheckpoint();
    // A checkpoint the person loaded meanwhile wins.
    if (!stored || loads > 0) return;
    await get().openCheckpoint(stored.blob, stored.name, { persist: false, restored: true });
  },

  async scoreView(options = {}) {
    const { view, model, driftView } = get();
    if (!view || !model || (driftView === view && !options.again)) return;
    const startedAt = performance.now();
    // A playground change: the figures before it stay, stale, while it is scored (several quick changes keep the last scored ones).
    const before = get();
    const staleDrift = before.source?.kind === 'playground' ? (before.drift ?? (before.scoring ? before.staleDrift : null)) : null;
    set({
      scoring: { method: 'naive-compressed', done: 0, total: 4, tokens: 0, tokensTotal: 0, startedAt },
      scoringCancelled: false,
      driftError: null,
      drift: null,
      driftView: view,
      staleDrift,
    });
    try {
      const scored = await scoringWorker().score(view.rollout, (p) => set({ scoring: { ...p, startedAt } }), get().driftWindow);
      if (get().view !== view || get().model !== model) return; // another rollout (or model) is shown now; its own request is in flight
      const drift = driftOf(view, scored.scores, { positions: scored.positions, window: scored.window });
      set({ drift, scoring: null, staleDrift: null });
      // The data-set table's rows are scored without a window: a windowed drift stays in the panel.
      if (get().rollouts.length > 1 && scored.window === null) get().recordRowDrift?.(get().rolloutIndex, driftRow(drift, view.tree));
    } catch (error) {
      if (error instanceof StaleScoreError || get().view !== view) return;
      if (error instanceof ScoreCancelledError) set({ scoring: null, scoringCancelled: true, staleDrift: null });
      else set({ scoring: null, staleDrift: null, driftError: error instanceof Error ? error.message : String(error) });
    }
  },

  cancelScoring() {
    if (get().scoring) scoringWorker().cancelScore();
  },

  async setDriftWindow(window) {
    if (window === get().driftWindow) return;
    set({ driftWindow: window });
    await get().scoreView({ again: true });
  },
});
