// The workbench store's shape: one interface per slice and their union. Slices are typed against
// this module, not against the store that assembles them, so no slice imports another or the store.
import type { StateCreator } from 'zustand';
import type { AdapterSummary, GpuEvent } from '../../gpu/runtime/device';
import type { SamplingOptions } from '../../harness/policies/model';
import type { Method } from '../../plan/types';
import type { RolloutJson } from '../../rollout';
import type { RolloutRow } from '../../tree';
import type { JumpKind } from '../core/contextFind';
import type { PlayOutcome } from '../core/playground';
import type { DriftData } from '../core/drift';
import type { MetricHistory } from '../core/history';
import type { ViewData } from '../core/viewData';
import type { ImportTokenizerName, LoadReport, ParsePhase, RolloutSummary } from '../protocol/parse';
import type { DriftRow, ModelFolderBlobs, ModelLoaded, ScoreProgress } from '../protocol/score';
import type { BatchEntry, Progress, RunInfo, RunStatus, ScoredTargets, TrainReply } from '../protocol/train';
import type { RunConfig } from '../../run/config';
import type { MetricRecord } from '../../run/engine';
import type { ColorMode, RowMode, SourceRef } from '../url/schema';

export type WorkbenchState = GpuSlice &
  RolloutSlice &
  ViewSlice &
  DriftSlice &
  HubSlice &
  DatasetSlice &
  TrainSlice &
  TourSlice &
  GlossarySlice &
  ContextSlice &
  PlaygroundSlice;

/** A slice of the workbench store: its part of the state, seeing the whole. */
export type Slice<T> = StateCreator<WorkbenchState, [], [], T>;

// --- GPU: what the page knows about WebGPU: probing, the adapter in use, or why there is none.

export interface GpuSlice {
  gpu: { kind: 'probing' } | { kind: 'ready'; adapter: AdapterSummary; line: string } | { kind: 'unavailable'; reason: string; message: string };
  gpuEvents: GpuEvent[];
  probeGpu(): Promise<void>;
}

// --- Rollout: the open set, the shown rollout and its view data, the load in progress.

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
  /** How imported text is tokenized (default: importTokenizer). */
  tokenizer?: ImportTokenizerName;
}

export type ShowOptions = Pick<OpenOptions, 'target' | 'persist'> & {
  /** The view built before from this very JSON object (the playground's undo and redo): shown as it is, not validated and derived again. */
  view?: ViewData;
};

export interface RolloutSlice {
  source: SourceRef | null;
  /** The open set, one summary per rollout (the rollouts themselves stay in the worker). */
  rollouts: RolloutSummary[];
  /** The worker's name for the open set. */
  setJob: number | null;
  rolloutIndex: number;
  view: ViewData | null;
  /**
   * How many of the panels whose DOM grows with the tree (STAGED_PANELS, in page order) show `view`: all
   * at once for a small tree; for a large one (STAGED_NODES) one more per task after the store update, so
   * that no task carries every panel's commit (the others wait as an empty frame of their last height).
   */
  viewStage: number;
  loading: { fileName: string; phase: ParsePhase | 'derive'; done: number; total: number } | null;
  loadError: string | null;
  /** Timings of the last successful load, milliseconds. */
  loadTimings: { read: number; validate: number; derive: number } | null;
  /** What the last file's import read and skipped (null for a rollout shown from memory). */
  importReport: LoadReport | null;
  /** Opens the person started (file, drop, example button); start-up yields to any of them. */
  manualOpens: number;
  /**
   * How the text of an imported log (chat, agent session, calls) is tokenized: bytes, GPT-2 word pieces for a
   * GPT-2 checkpoint, or a loaded model folder's own tokenizer and chat template (`hf:<name>`).
   */
  importTokenizer: ImportTokenizerName;
  /** The largest tree (N_packed) the page derives; a rollout above it is refused with the figure (docs/reliability.md). */
  maxPacked: number;
  setMaxPacked(limit: number): void;
  /** Sets the import choice; an open file is imported again with it. */
  setImportTokenizer(tokenizer: ImportTokenizerName): Promise<void>;
  openBlob(blob: Blob, source: SourceRef, options?: OpenOptions): Promise<boolean>;
  openExample(name: string, options?: OpenOptions): Promise<boolean>;
  /** Shows one rollout given as JSON (small, in memory); false, with `loadError` set, when it does not validate. */
  showRollout(json: RolloutJson, source: SourceRef, options?: ShowOptions): boolean;
  /** Keeps a rollout as the last opened set (IndexedDB) without showing it; a failed write is ignored. */
  keepRollout(json: RolloutJson, source: SourceRef): Promise<void>;
  selectRollout(index: number, target?: number | null): Promise<void>;
  dismissLoadError(): void;
}

// --- View: the selection and how the views show it (all shareable, in the URL).

export interface ViewSlice {
  selectedTarget: number | null;
  method: Method;
  rows: RowMode;
  /** Target cells coloured by state, or by drift once a model has scored the rollout. */
  colorBy: ColorMode;
  /** The sampler the drift panel's expected drift assumes (temperature 1 by default). */
  sampler: Required<SamplingOptions>;
  selectTarget(id: number | null): void;
  /** Moves the selection by `delta` targets (in id order), clamped to the first and last. */
  stepTarget(delta: number): void;
  setMethod(method: Method): void;
  setRows(rows: RowMode): void;
  setColorBy(color: ColorMode): void;
  setSampler(sampler: Required<SamplingOptions>): void;
}

// --- Context: the text panes' one hover (shared with the staircase and the tree), find and jumps.

/** Physical ids [first, end). */
export interface IdSpan {
  first: number;
  end: number;
}

export interface ContextSlice {
  /** Ids under the pointer in any view (text, staircase cell, tree node); the others highlight them. */
  hover: IdSpan | null;
  findQuery: string;
  /** The current match (an index into findMatches(view, findQuery)), for `findView` only. */
  findIndex: number;
  findView: ViewData | null;
  /** Ids the panes scroll to (the last jump); `nonce` makes a repeated jump scroll again. */
  reveal: (IdSpan & { nonce: number }) | null;
  setHover(span: IdSpan | null): void;
  setFindQuery(query: string): void;
  /** Next (1) or previous (-1) match: selects a target whose live prefix shows it and reveals it. */
  stepFind(delta: 1 | -1): void;
  /** Next or previous edit, observation or diverging target, from the selected target. */
  jump(kind: JumpKind, delta: 1 | -1): void;
  revealIds(span: IdSpan): void;
}

// --- Drift: the model in the scoring worker and the drift of the shown rollout under each method.

export interface ScoringModel extends Pick<ModelLoaded, 'description' | 'adapter' | 'kind'> {
  name: string;
  /** A model folder's tokenizer (`hf:<name>`), or null (a GPT-2 checkpoint; a folder without tokenizer.json). */
  tokenizer: string | null;
  /** Loaded again from IndexedDB on start (kept from an earlier visit). */
  restored: boolean;
  /** Counts loads: scores made under another key belong to another model. */
  key: number;
}

export interface DriftSlice {
  model: ScoringModel | null;
  modelLoading: string | null;
  /** A model folder's weights on the GPU so far, in bytes of their total (null before the first tensor, or for a checkpoint). */
  modelLoadProgress: { bytes: number; total: number } | null;
  /** A line about the model kept from the last visit, when it could not be loaded again (a folder too large to keep). */
  modelNotice: string | null;
  /** Drift of the shown rollout (null before scoring, or without a model). */
  drift: DriftData | null;
  /** The view the drift (or the scoring in flight) belongs to. */
  driftView: ViewData | null;
  /** In the playground, while a change is scored: the drift before it, shown marked stale until the new one arrives. */
  staleDrift: DriftData | null;
  /** While scoring: the method being scored (`done` of `total` before it) and rows forwarded of all methods' (`tokens` of `tokensTotal`), since `startedAt` (performance.now()). */
  scoring: (Omit<ScoreProgress, 'type' | 'job'> & { startedAt: number }) | null;
  /** The shown rollout's scoring was cancelled (the panel offers to score it again). */
  scoringCancelled: boolean;
  driftError: string | null;
  /** Loads a checkpoint into the scoring worker and keeps it in IndexedDB (unless `persist` is false). */
  openCheckpoint(file: Blob, name: string, options?: { persist?: boolean; restored?: boolean }): Promise<boolean>;
  /**
   * Loads a model folder (its files by name relative to the folder) into the scoring worker, streamed; its
   * tokenizer becomes the import choice. Kept in IndexedDB (unless `persist` is false) when not too large.
   */
  openModelFolder(name: string, files: ModelFolderBlobs, options?: { persist?: boolean; restored?: boolean }): Promise<boolean>;
  /** Fetches the demo checkpoint the app ships (public/models/demo.safetensors) and loads it. */
  useDemoModel(): Promise<boolean>;
  /** On start: loads the checkpoint or model folder kept in IndexedDB, if any (once; later calls share the first). */
  restoreCheckpoint(): Promise<void>;
  /** Scores the shown rollout (no-op without a model, or when it is already scored, unless `again`). */
  scoreView(options?: { again?: boolean }): Promise<void>;
  /** Stops the scoring in flight (the worker stops at its next forward pass). */
  cancelScoring(): void;
  /** The drift panel's window: every target scored on the last `driftWindow` − 1 tokens of its context (null: none; src/plan/reach.ts). */
  driftWindow: number | null;
  /** Sets the window and scores the shown rollout again. */
  setDriftWindow(window: number | null): Promise<void>;
}

// --- Data set: the table of a JSONL set, one row of figures per rollout, and its drift rows.

export interface DatasetTable {
  /** The set (rollout-worker job) the rows belong to. */
  set: number;
  rows: RolloutRow[];
}

export interface DatasetSlice {
  /** The open set's table (null while its rows are derived, or for a single rollout). */
  table: DatasetTable | null;
  tableProgress: { done: number; total: number } | null;
  tableError: string | null;
  /** Drift rows by rollout index, under the model with `modelKey` (rows of another model are not shown). */
  tableDrift: { set: number; modelKey: number; rows: Map<number, DriftRow | { error: string }>; version: number } | null;
  /** Scoring every rollout of the set, in progress. */
  tableScoring: { done: number; total: number } | null;
  /** Derives the open set's rows in the rollout worker (no-op for a single rollout). */
  loadTable(): Promise<void>;
  /** Scores every rollout of the set not scored yet, one at a time, with the loaded model. */
  scoreTable(): Promise<void>;
  stopTableScoring(): void;
  /** Keeps the drift row of rollout `index` (the shown rollout, scored by the drift panel). */
  recordRowDrift(index: number, row: DriftRow): void;
}

// --- Train: the page's mirror of the training worker.

export interface TrainSlice {
  trainConfig: RunConfig;
  trainGpu: { kind: 'probing' } | { kind: 'ready'; adapter: string; software: boolean } | { kind: 'unavailable'; message: string };
  trainStatus: RunStatus;
  trainRun: RunInfo | null;
  trainProgress: Progress | null;
  trainHistory: MetricHistory;
  /** Bumped on every change of trainHistory (which is mutated in place). */
  trainHistoryVersion: number;
  trainLatest: Partial<Record<Method, MetricRecord>>;
  trainCheckpointStep: number;
  trainBanner: { kind: 'device-lost' | 'recovered' | 'notice'; message: string } | null;
  /** The episode being played, as the engine's last `live` message gave it. */
  trainLive: Omit<Extract<TrainReply, { type: 'live' }>, 'type'> | null;
  /** Show the episode being played in the staircase and tree views. */
  trainFollow: boolean;
  trainBatches: Partial<Record<Method, { step: number; rollouts: BatchEntry[] }>>;
  trainScores: { method: Method; id: string; scores: ScoredTargets } | null;
  /** Checkpoints kept in this browser (imported or forked from a run), by name. */
  trainFiles: string[];

  trainConnect(): void;
  setTrainConfig(patch: Partial<RunConfig>): void;
  trainPlay(): void;
  trainPause(): void;
  trainStepOnce(): void;
  trainReset(): void;
  setTrainFollow(on: boolean): void;
  trainImportCheckpoint(file: File): Promise<void>;
  /** Fetches the demo checkpoint shipped with the app, starts the draft config from it and sets the task it knows. */
  trainUseDemoModel(): Promise<void>;
  /** "The paper's claim": fetches the weak start, sets the preset's run (src/run/config.ts PAPER_CLAIM) and starts it. */
  trainPaperClaim(): Promise<void>;
  trainExportCheckpoint(method: Method): Promise<{ name: string; weights: Uint8Array; optimizer: Uint8Array }>;
  /** Keeps `method`'s weights as a checkpoint and points the draft config at it (e.g. SFT warm start → RL). */
  trainContinueFrom(method: Method, patch: Partial<RunConfig>): Promise<void>;
  trainInspect(method: Method, id: string): Promise<void>;
  dismissTrainBanner(): void;
}

// --- Tour: the guided tour's step (in the URL) and how far its setup got.

export interface TourSlice {
  /** The step shown (1-based), or null when the tour is closed. */
  tourStep: number | null;
  /** The step whose setup was last started (a step set from the URL is applied once the page shows a rollout). */
  tourApplied: number | null;
  /** The step's setup is being applied (an example opening, the demo model loading). */
  tourBusy: boolean;
  /** Why the step cannot run here (it needs WebGPU and there is none), or null. */
  tourBlocked: string | null;
  tourError: string | null;
  /** Shows step `n` (clamped to the tour) and applies its setup through the other slices. */
  tourGo(n: number): Promise<void>;
  tourNext(): void;
  tourBack(): void;
  endTour(): void;
  /** The first-visit "New here?" line shows: false for good (in localStorage) once dismissed, or once a tour was taken or ended. */
  tourOffer: boolean;
  dismissTourOffer(): void;
}

// --- Glossary: the panel showing docs/glossary.md, open at an entry (in the URL).

export interface GlossarySlice {
  /** The entry the glossary panel shows (an anchor of docs/glossary.md), 'all' for its top, null when closed. */
  glossaryTerm: string | null;
  /** A doc section the panel shows over the glossary (a reference such as `tree.md#the-figures`), or null. */
  glossaryDoc: string | null;
  openGlossary(id?: string): void;
  /** Opens a doc reference of the glossary in the panel (it stays open at its entry underneath). */
  openDoc(href: string | null): void;
  closeGlossary(): void;
}

// --- Playground: a rollout built by typing and edits, shown in every view as it changes (in the URL as `play`).

/** Where the playground starts: nothing (GPT-2 words or bytes), the worked example in words, the rollout shown, or a rollout given (a link's). */
export type PlayStart = 'words' | 'bytes' | 'example' | 'shown' | { rollout: RolloutJson };

export interface PlaygroundSlice {
  /** The rollout being built, the changes to undo and redo, and why the last change was refused; null when the playground is closed. */
  play: { rollout: RolloutJson; past: RolloutJson[]; future: RolloutJson[]; refusal: string | null } | null;
  /** The rollout's link code (null when longer than a link holds) and its length; null while it is computed. */
  playLink: { code: string | null; length: number } | null;
  openPlayground(from: PlayStart): Promise<void>;
  /** Applies a change (a pure function of the rollout): shown at once, or refused with its reason. */
  playChange(change: (rollout: RolloutJson) => PlayOutcome): boolean;
  playUndo(): void;
  playRedo(): void;
  closePlayground(): void;
}

// --- Hub: a model from the Hugging Face Hub by id, downloaded into the page's cache (OPFS), then opened as a model folder.

export interface HubDownload {
  /** `ORG/NAME[@REV]` as typed. */
  id: string;
  /** Bytes in the cache of the model's total (what was cached before counts). */
  bytes: number;
  total: number;
  /** Bytes fetched over the network in this load (what the ETA follows). */
  fetched: number;
  startedAt: number;
}

export interface HubSlice {
  /** The Hub's address (a setting kept in localStorage; tests point it at a local stand-in). */
  hubEndpoint: string;
  hubDownload: HubDownload | null;
  hubError: string | null;
  /** Bytes the page's Hub cache holds (null until measured). */
  hubCacheBytes: number | null;
  setHubEndpoint(endpoint: string): void;
  /**
   * Downloads `ORG/NAME[@REV]` into the cache (resuming a partial file; no request when it is whole there) and opens
   * it as a model folder. `token` (a gated model's) is sent to the Hub only, and never kept. Its id is kept in
   * IndexedDB as the scoring model; `restored` (on start) loads it from the cache only, with no request.
   */
  openHubModel(id: string, token?: string, options?: { restored?: boolean }): Promise<boolean>;
  measureHubCache(): Promise<void>;
  clearHubCache(): Promise<void>;
}
