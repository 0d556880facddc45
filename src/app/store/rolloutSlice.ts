// Rollout slice: which set is open (and where it came from), the selected rollout of the set and
// its derived view data, the load in progress, and the last load error. Files are parsed, and the
// rollout shown derived (tree, view inputs, plans, masks), in the worker: the page only puts the
// posted data together (core/derived.ts) in a task of its own, then updates the store in the next, so no
// view is ever shown half loaded (a large tree reaches the context and tree panels one per task after it: viewStage). A
// rollout the page already holds as JSON (the episode being played, a rollout of the last training
// batch: small, from the page's own harness) is validated and derived here, without the worker or
// the loading phases. A failed load only sets `loadError`, everything shown before stays as it was; the newest
// open wins over one still in flight. Imported text is tokenized as `importTokenizer` says; a
// rollout's tokenizer is loaded on the page before its views are built (gpt2's ranks only for gpt2).
import { isKnownTokenizer } from '../../rollout/tokenizer';
import { loadTokenizers, stringifyRollout, validateRollout, type Rollout, type RolloutJson } from '../../rollout';
import { DEFAULT_MAX_PACKED, packedProblem } from '../../plan/size';
import { packedLength } from '../../tree';
import { viewDataOf, type DerivedView } from '../core/derived';
import { buildViewData, defaultTarget, type ViewData } from '../core/viewData';
import { exampleFileName, fetchExample, findExample } from '../load/examples';
import { loadLastSet, saveLastSet } from '../persist/lastSet';
import { StaleParseError } from '../protocol/parseClient';
import { summaryOf } from '../protocol/parse';
import { rolloutWorker } from './clients';
import type { SourceRef } from '../url/schema';
import type { RolloutSlice, Slice, WorkbenchState } from './types';

/** Counts opens (files, examples, shown rollouts): an open still in flight when a newer one starts is dropped. */
let opens = 0;

/**
 * Resolves in a later task. The worker's answer is taken in (deserialized) in one task, the view put
 * together from it in the next, and the store updated (React's commit) in a third: on a tree of a
 * million nodes each is tens of milliseconds, and one task holding all three would block the page for their sum.
 */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The panels, in page order, that take a large view one per task (viewStage): those whose DOM grows
 * with the tree: each context pane (its text built and laid out, scrolled to its end) and the tree. The
 * canvases (staircase, masks) stay mounted and draw in tasks of their own anyway.
 */
export const STAGED_PANELS = ['context-live', 'context-naive-compressed', 'context-naive-full', 'tree'] as const;
/** From this many trie nodes (N_packed) on, the heavy panels take a new view one per task. */
export const STAGED_NODES = 100_000;

/** The viewStage a view starts at: every panel at once for a small tree, none yet for a large one. */
function firstStage(view: ViewData): number {
  return view.trie.id.length >= STAGED_NODES ? 0 : STAGED_PANELS.length;
}

/** Shows `view` in one more heavy panel per task, until all do or another view is shown. */
async function stageViews(set: (state: Partial<WorkbenchState>) => void, get: () => WorkbenchState, view: ViewData): Promise<void> {
  while (get().view === view && get().viewStage < STAGED_PANELS.length) {
    await nextTask();
    if (get().view === view) set({ viewStage: get().viewStage + 1 });
  }
}

/** How the refusal of a tree above the page's limit says to allow more. */
const RAISE = 'raise "largest tree" in the load bar to show it';

/**
 * The rollout's view data from what the worker derived, unless its tree (N_packed, counted in the
 * worker from the events) is above `limit`: then the refusal (the worker derived nothing; a 244 KB
 * rollout can hold a 4M-node tree).
 */
async function derive(rollout: Rollout, nPacked: number, derived: DerivedView | null, limit: number, set: number, index: number): Promise<ViewData> {
  const refused = packedProblem(rollout.id, nPacked, limit, RAISE);
  if (refused) throw new Error(refused);
  // Not derived under the limit the request carried, which was raised since: asked for again.
  derived ??= (await rolloutWorker().sizedRollout(set, index, limit)).derived;
  if (!derived) throw new Error(`rollout "${rollout.id}" came without its view data`);
  // The views label tokens with their text: the rollout's tokenizer must be at hand.
  await loadTokenizers([rollout.tokenizer]);
  await nextTask();
  return viewDataOf(derived);
}

export const createRolloutSlice: Slice<RolloutSlice> = (set, get) => ({
  source: null,
  rollouts: [],
  setJob: null,
  rolloutIndex: 0,
  view: null,
  viewStage: STAGED_PANELS.length,
  loading: null,
  loadError: null,
  loadTimings: null,
  importReport: null,
  manualOpens: 0,
  importTokenizer: 'byte',
  maxPacked: DEFAULT_MAX_PACKED,

  setMaxPacked(limit) {
    if (Number.isSafeInteger(limit) && limit >= 1) set({ maxPacked: limit });
  },

  async openBlob(blob, source, options = {}) {
    const fileName = options.fileName ?? source.name;
    const tokenizer = options.tokenizer ?? get().importTokenizer;
    const open = ++opens;
    if (!options.auto) set({ manualOpens: get().manualOpens + 1 });
    if (tokenizer.startsWith('hf:') && !isKnownTokenizer(tokenizer)) {
      // Imported with a model folder's tokenizer: that folder must be loaded (a reload loads the kept one first).
      set({
        loadError: `${fileName}: imported with ${tokenizer}, the tokenizer of a model folder that is not loaded: open the folder again ("Open model folder…")`,
      });
      return false;
    }
    set({ loading: { fileName, phase: 'read', done: 0, total: blob.size } });
    let outcome;
    try {
      const request = { select: options.rolloutId ?? null, keep: get().setJob, tokenizer, maxPacked: get().maxPacked };
      outcome = await rolloutWorker().parse(blob, fileName, request, (phase, done, total) => {
        if (open === opens) set({ loading: { fileName, phase, done, total } });
      });
    } catch (error) {
      if (error instanceof StaleParseError || open !== opens) return false;
      set({ loading: null, loadError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    if (open !== opens) return false; // a rollout was shown meanwhile
    performance.mark('mw:parsed');
    let view: ViewData;
    try {
      view = await derive(outcome.rollout, outcome.nPacked, outcome.derived, get().maxPacked, outcome.set, outcome.index);
    } catch (error) {
      if (open === opens) set({ loading: null, loadError: `${fileName}: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
    await nextTask();
    if (open !== opens) return false;
    set({
      importTokenizer: tokenizer,
      source,
      rollouts: outcome.summaries,
      setJob: outcome.set,
      rolloutIndex: outcome.index,
      view,
      viewStage: firstStage(view),
      selectedTarget: pickTarget(view, options.target),
      loading: null,
      loadError: null,
      loadTimings: { read: outcome.readMs, validate: outcome.validateMs, derive: outcome.deriveMs },
      importReport: outcome.report,
    });
    void stageViews(set, get, view);
    // After the views' commit, in a task of its own: the data-set table's figures (derived in the
    // worker) and the set kept for the next visit (IndexedDB).
    void nextTask().then(() => {
      void get().loadTable?.();
      if (options.persist !== false) void saveLastSet(source.kind, source.name, blob, tokenizer).catch(() => undefined);
    });
    return true;
  },

  async setImportTokenizer(tokenizer) {
    if (tokenizer === get().importTokenizer) return;
    set({ importTokenizer: tokenizer });
    // A file the person opened is imported again with the new choice (examples are v1 rollouts: no import).
    const { source } = get();
    if (source?.kind !== 'file') return;
    const stored = await loadLastSet();
    if (stored?.kind !== 'file' || stored.name !== source.name || get().importTokenizer !== tokenizer) return;
    const selected = get().view?.rollout.id ?? null;
    await get().openBlob(stored.blob, source, { tokenizer, rolloutId: selected });
  },

  keepRollout: (json, source) => saveRolloutJson(source, json),

  showRollout(json, source, options = {}) {
    const started = performance.now();
    let rollout: Rollout;
    let validateMs: number;
    let derived;
    try {
      const reused = options.view;
      rollout = reused ? reused.rollout : validateRollout(json, { file: source.name });
      validateMs = performance.now() - started;
      // Rollouts shown from memory come from the page's own harness (byte) or a set already loaded.
      const viewStarted = performance.now();
      // N_packed is at most (K + 1) · L (each branch adds at most its own length): counted only when that bound is over the limit.
      const limit = get().maxPacked;
      const refused =
        (rollout.K + 1) * rollout.length <= limit
          ? null
          : packedProblem(rollout.id, reused ? reused.tree.figures.packedLength : packedLength(rollout), limit, RAISE);
      if (refused) throw new Error(refused);
      derived = { view: reused ?? buildViewData(rollout), ms: 0 };
      derived.ms = performance.now() - viewStarted;
    } catch (error) {
      set({ loadError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    opens++;
    set({
      source,
      rollouts: [summaryOf(rollout)],
      setJob: null,
      rolloutIndex: 0,
      view: derived.view,
      viewStage: firstStage(derived.view),
      selectedTarget: pickTarget(derived.view, options.target),
      loading: null,
      loadError: null,
      loadTimings: { read: 0, validate: validateMs, derive: derived.ms },
      importReport: null,
    });
    void get().loadTable?.();
    void stageViews(set, get, derived.view);
    if (options.persist !== false) void saveRolloutJson(source, json);
    return true;
  },

  async openExample(name, options = {}) {
    if (!options.auto) set({ manualOpens: get().manualOpens + 1 });
    const opensBefore = get().manualOpens;
    const example = findExample(name);
    if (!example) {
      set({ loadError: `no built-in example named "${name}"` });
      return false;
    }
    let blob: Blob;
    try {
      blob = await fetchExample(example, rolloutWorker().generate);
    } catch (error) {
      set({ loadError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    if (get().manualOpens !== opensBefore) return false; // the person opened something else meanwhile
    return get().openBlob(blob, { kind: 'example', name }, { ...options, auto: true, fileName: exampleFileName(example) });
  },

  async selectRollout(index, target) {
    const { rollouts, rolloutIndex, view, setJob } = get();
    if (index < 0 || index >= rollouts.length || setJob === null || (index === rolloutIndex && view)) return;
    try {
      const { rollout, nPacked, derived } = await rolloutWorker().sizedRollout(setJob, index, get().maxPacked);
      const view = await derive(rollout, nPacked, derived, get().maxPacked, setJob, index);
      await nextTask();
      if (get().setJob !== setJob) return; // another set was opened meanwhile
      set({ rolloutIndex: index, view, viewStage: firstStage(view), loadError: null });
      get().selectTarget(pickTarget(view, target));
      void stageViews(set, get, view);
    } catch (error) {
      set({ loadError: `${rollouts[index].id}: ${error instanceof Error ? error.message : String(error)}` });
    }
  },

  dismissLoadError() {
    set({ loadError: null });
  },
});

/** Keeps one rollout given as JSON as the last opened set (a failure to store is not the view's concern). */
function saveRolloutJson(source: SourceRef, json: RolloutJson): Promise<void> {
  const blob = new Blob([stringifyRollout(json)], { type: 'application/json' });
  return saveLastSet(source.kind, source.name, blob).catch(() => undefined);
}

function pickTarget(view: ViewData, requested: number | null | undefined): number | null {
  if (requested !== undefined && requested !== null && requested >= 0 && requested < view.rollout.length && view.rollout.isTarget[requested]) {
    return requested;
  }
  return defaultTarget(view);
}
