// Drift slice: the model loaded into the scoring worker (a user's GPT-2 checkpoint, a model folder of the
// families, or the demo model the app ships), kept in IndexedDB so a reload loads it again (a folder above
// FOLDER_KEEP_BYTES: a line asks to pick it again); a folder's tokenizer registered on the page (labels)
// and in the rollout worker (imports), and made the import choice; and the drift of the shown rollout
// under each method, recomputed whenever the shown rollout changes (or the window of the panel); the
// scoring's progress in tokens (what the bar and its ETA follow), and its cancel. In the playground, the
// last figures stay (marked stale) while a change is scored, until the new ones arrive.
import { driftOf, driftRow } from '../core/drift';
import { fetchShipped } from '../load/shipped';
import { DEMO_MODEL } from '../../run/config';
import { registerTokenizer } from '../../rollout/tokenizer';
import type { HfTokenizerFiles } from '../../rollout/tokenizer-hf';
import { familyWeightsName } from '../load/checkpointFile';
import { loadScoringCheckpoint, saveScoringCheckpoint, saveScoringFolder } from '../persist/checkpoint';
import { ScoreCancelledError, StaleScoreError } from '../protocol/scoreClient';
import { rolloutWorker, scoringWorker } from './clients';
import type { DriftSlice, Slice } from './types';

let loads = 0;
let restoring: Promise<void> | null = null;

/** A folder's tokenizer on the page (labels) and in the rollout worker (imports); its `hf:<name>`. */
async function useFolderTokenizer(files: HfTokenizerFiles): Promise<string> {
  const { createHfTokenizer } = await import('../../rollout/tokenizer-hf');
  const tokenizer = createHfTokenizer(files);
  registerTokenizer(tokenizer);
  await rolloutWorker().useTokenizer(files);
  return tokenizer.name;
}

function size(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export const createDriftSlice: Slice<DriftSlice> = (set, get) => ({
  model: null,
  modelLoading: null,
  modelLoadProgress: null,
  modelNotice: null,
  drift: null,
  driftView: null,
  staleDrift: null,
  scoring: null,
  scoringCancelled: false,
  driftError: null,
  driftWindow: null,

  async openCheckpoint(file, name, options = {}) {
    const key = ++loads;
    set({ modelLoading: name, modelLoadProgress: null, modelNotice: null, driftError: null });
    try {
      // A family model's weights alone are no GPT-2 checkpoint: its folder holds the config they need.
      const family = await familyWeightsName(file);
      if (family)
        throw new Error(`the weights of a Llama / Qwen model (tensor ${family}): open its whole folder (config.json beside them) with "Open model folder…"`);
      const loaded = await scoringWorker().load(await file.arrayBuffer(), name);
      if (key !== loads) return false; // another checkpoint was asked for meanwhile
      set({
        model: { name, kind: 'gpt2', tokenizer: null, description: loaded.description, adapter: loaded.adapter, restored: options.restored === true, key },
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

  async openModelFolder(name, files, options = {}) {
    const key = ++loads;
    set({ modelLoading: name, modelLoadProgress: null, modelNotice: null, driftError: null });
    let tokenizer: string | null = null;
    try {
      const loaded = await scoringWorker().loadFolder(name, files, (bytes, total) => {
        if (key === loads) set({ modelLoadProgress: { bytes, total } });
      });
      if (key !== loads) return false;
      if (loaded.tokenizer) tokenizer = await useFolderTokenizer(loaded.tokenizer);
      if (key !== loads) return false;
      set({
        model: { name, kind: 'family', tokenizer, description: loaded.description, adapter: loaded.adapter, restored: options.restored === true, key },
        modelLoading: null,
        modelLoadProgress: null,
        drift: null,
        driftView: null,
      });
    } catch (error) {
      // The worker keeps the model it held: the panel goes on showing it.
      if (key === loads) set({ modelLoading: null, modelLoadProgress: null, driftError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    if (options.persist !== false) void saveScoringFolder(name, files).catch(() => undefined);
    // Its tokenizer and chat template become how imported logs are tokenized (an open import is imported
    // again). Loaded again after a reload, it leaves a file shown with its own choice as it was.
    if (tokenizer && !options.restored) await get().setImportTokenizer(tokenizer as `hf:${string}`);
    else if (tokenizer && get().source?.kind !== 'file') set({ importTokenizer: tokenizer as `hf:${string}` });
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

  restoreCheckpoint() {
    restoring ??= (async () => {
      const stored = await loadScoringCheckpoint();
      // A model the person loaded meanwhile wins.
      if (!stored || loads > 0) return;
      if (stored.kind === 'checkpoint') await get().openCheckpoint(stored.blob, stored.name, { persist: false, restored: true });
      else if (stored.kind === 'folder') await get().openModelFolder(stored.name, stored.files, { persist: false, restored: true });
      else if (stored.kind === 'hub') await get().openHubModel(stored.id, undefined, { restored: true });
      else
        set({
          modelNotice: `model folder ${stored.name} (${size(stored.bytes)}) was not kept in this browser (larger than it keeps): pick the folder again with "Open model folder…"`,
        });
    })();
    return restoring;
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
