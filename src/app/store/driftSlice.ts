// Drift slice: the model loaded into the scoring worker (a user's GPT-2 checkpoint), and the drift
// of the shown rollout under each method, recomputed whenever the shown rollout changes.
import { driftOf } from '../core/drift';
import { createScorer, StaleScoreError, type Scorer } from '../protocol/scoreClient';
import type { DriftSlice, Slice } from './types';

let scorer: Scorer | null = null;

export const createDriftSlice: Slice<DriftSlice> = (set, get) => ({
  model: null,
  modelLoading: null,
  drift: null,
  driftView: null,
  scoring: null,
  driftError: null,

  async openCheckpoint(file, name) {
    set({ modelLoading: name, driftError: null });
    try {
      scorer ??= createScorer();
      const loaded = await scorer.load(await file.arrayBuffer(), name);
      set({ model: { name, description: loaded.description, adapter: loaded.adapter }, modelLoading: null, drift: null, driftView: null });
    } catch (error) {
      set({ modelLoading: null, driftError: `${name}: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
    await get().scoreView();
    return true;
  },

  async scoreView() {
    const { view, model, driftView } = get();
    if (!view || !model || !scorer || driftView === view) return;
    set({ scoring: { method: 'naive-compressed', done: 0, total: 4 }, driftError: null, drift: null, driftView: view });
    try {
      const scored = await scorer.score(view.rollout, (method, done, total) => set({ scoring: { method, done, total } }));
      if (get().view !== view) return; // another rollout is shown now; its own request is in flight
      set({ drift: driftOf(view, scored.scores), scoring: null });
    } catch (error) {
      if (error instanceof StaleScoreError || get().view !== view) return;
      set({ scoring: null, driftError: error instanceof Error ? error.message : String(error) });
    }
  },
});
