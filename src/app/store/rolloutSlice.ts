// Rollout slice: which set is open (and where it came from), the selected rollout of the set and
// its derived view data, the load in progress, and the last load error. Files are parsed in the
// worker; a rollout the page already holds as JSON (the episode being played, a rollout of the last
// training batch) is validated and derived here, in one update, without the worker or the loading
// phases. A failed load only sets `loadError`, everything shown before stays as it was; the newest
// open wins over one still in flight.
import type { StateCreator } from 'zustand';
import { stringifyRollout, validateRollout, type Rollout, type RolloutJson } from '../../rollout';
import { buildViewData, defaultTarget, type ViewData } from '../core/viewData';
import { exampleFileName, fetchExample, findExample } from '../load/examples';
import { saveLastSet } from '../persist/lastSet';
import { createParser, StaleParseError, type Parser } from '../workers/parseClient';
import type { ParsePhase, RolloutSummary } from '../workers/protocol';
import type { WorkbenchState } from './index';

export type SourceRef = { kind: 'example' | 'file'; name: string };

export function sourceKey(source: SourceRef): string {
  return `${source.kind}:${source.name}`;
}

export function parseSourceKey(key: string): SourceRef | null {
  const m = /^(example|file):(.+)$/.exec(key);
  return m ? { kind: m[1] as SourceRef['kind'], name: m[2] } : null;
}

export interface LoadProgress {
  fileName: string;
  phase: ParsePhase | 'derive';
  done: number;
  total: number;
}

export interface OpenOptions {
  /** Rollout id to select within the set (default: the first). */
  rolloutId?: string | null;
  /** Target to select (default: the first diverging leaf). */
  target?: number | null;
  /** Keep the set in IndexedDB as the last opened one (default true). */
  persist?: boolean;
  /** Opened by the start-up sequence rather than by the person (who then takes precedence). */
  auto?: boolean;
  /** The name the validator uses in its messages (default: the source's name). */
  fileName?: string;
}

export interface ShowOptions {
  /** Target to select (default: the first diverging leaf). */
  target?: number | null;
  /** Keep the rollout in IndexedDB as the last opened set (default true). */
  persist?: boolean;
}

export interface RolloutSlice {
  source: SourceRef | null;
  /** The open set, one summary per rollout (the rollouts themselves stay in the worker). */
  rollouts: RolloutSummary[];
  /** The worker's name for the open set. */
  setJob: number | null;
  rolloutIndex: number;
  view: ViewData | null;
  loading: LoadProgress | null;
  loadError: string | null;
  /** Timings of the last successful load, milliseconds. */
  loadTimings: { read: number; validate: number; derive: number } | null;
  /** Opens the person started (file, drop, example button); start-up yields to any of them. */
  manualOpens: number;
  openBlob(blob: Blob, source: SourceRef, options?: OpenOptions): Promise<boolean>;
  openExample(name: string, options?: OpenOptions): Promise<boolean>;
  /** Shows one rollout given as JSON (small, in memory); false, with `loadError` set, when it does not validate. */
  showRollout(json: RolloutJson, source: SourceRef, options?: ShowOptions): boolean;
  selectRollout(index: number, target?: number | null): Promise<void>;
  dismissLoadError(): void;
}

let parser: Parser | null = null;
/** Counts opens (files, examples, shown rollouts): an open still in flight when a newer one starts is dropped. */
let opens = 0;

function derive(rollout: Rollout): { view: ViewData; ms: number } {
  const started = performance.now();
  const view = buildViewData(rollout);
  return { view, ms: performance.now() - started };
}

export const createRolloutSlice: StateCreator<WorkbenchState, [], [], RolloutSlice> = (set, get) => ({
  source: null,
  rollouts: [],
  setJob: null,
  rolloutIndex: 0,
  view: null,
  loading: null,
  loadError: null,
  loadTimings: null,
  manualOpens: 0,

  async openBlob(blob, source, options = {}) {
    const fileName = options.fileName ?? source.name;
    const open = ++opens;
    if (!options.auto) set({ manualOpens: get().manualOpens + 1 });
    set({ loading: { fileName, phase: 'read', done: 0, total: blob.size } });
    parser ??= createParser();
    let outcome;
    try {
      outcome = await parser.parse(blob, fileName, { select: options.rolloutId ?? null, keep: get().setJob }, (phase, done, total) => {
        if (open === opens) set({ loading: { fileName, phase, done, total } });
      });
    } catch (error) {
      if (error instanceof StaleParseError || open !== opens) return false;
      set({ loading: null, loadError: error instanceof Error ? error.message : String(error) });
      return false;
    }
    if (open !== opens) return false; // a rollout was shown meanwhile
    performance.mark('mw:parsed');
    set({ loading: { fileName, phase: 'derive', done: 0, total: 0 } });
    let derived;
    try {
      derived = derive(outcome.rollout);
    } catch (error) {
      set({ loading: null, loadError: `${fileName}: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
    set({
      source,
      rollouts: outcome.summaries,
      setJob: outcome.set,
      rolloutIndex: outcome.index,
      view: derived.view,
      selectedTarget: pickTarget(derived.view, options.target),
      loading: null,
      loadError: null,
      loadTimings: { read: outcome.readMs, validate: outcome.validateMs, derive: derived.ms },
    });
    if (options.persist !== false) void saveLastSet(source.kind, source.name, blob).catch(() => undefined);
    return true;
  },

  showRollout(json, source, options = {}) {
    const started = performance.now();
    let rollout: Rollout;
    let validateMs: number;
    let derived;
    try {
      rollout = validateRollout(json, { file: source.name });
      validateMs = performance.now() - started;
      derived = derive(rollout);
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
      selectedTarget: pickTarget(derived.view, options.target),
      loading: null,
      loadError: null,
      loadTimings: { read: 0, validate: validateMs, derive: derived.ms },
    });
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
      parser ??= createParser();
      blob = await fetchExample(example, parser.generate);
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
      parser ??= createParser();
      const rollout = await parser.rollout(setJob, index);
      if (get().setJob !== setJob) return; // another set was opened meanwhile
      const derived = derive(rollout);
      set({ rolloutIndex: index, view: derived.view, loadError: null });
      get().selectTarget(pickTarget(derived.view, target));
    } catch (error) {
      set({ loadError: `${rollouts[index].id}: ${error instanceof Error ? error.message : String(error)}` });
    }
  },

  dismissLoadError() {
    set({ loadError: null });
  },
});

function summaryOf(rollout: Rollout): RolloutSummary {
  return { id: rollout.id, length: rollout.length, K: rollout.K, ...(rollout.reward !== undefined ? { reward: rollout.reward } : {}) };
}

/** Keeps one rollout given as JSON as the last opened set (a failure to store is not the view's concern). */
export function saveRolloutJson(source: SourceRef, json: RolloutJson): Promise<void> {
  const blob = new Blob([stringifyRollout(json)], { type: 'application/json' });
  return saveLastSet(source.kind, source.name, blob).catch(() => undefined);
}

function pickTarget(view: ViewData, requested: number | null | undefined): number | null {
  if (requested !== undefined && requested !== null && requested >= 0 && requested < view.rollout.length && view.rollout.isTarget[requested]) {
    return requested;
  }
  return defaultTarget(view);
}
