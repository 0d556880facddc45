// Messages between the page and the scoring worker, which owns the WebGPU device and the model.
// `load`: a GPT-2 safetensors checkpoint (bytes moved, not copied). `load-folder`: a model folder as
// the Hub publishes it (Llama, Qwen2, Qwen3: docs/model.md), its files by name, read by the worker a
// tensor at a time over byte ranges (progress in bytes). `score`: one rollout; the worker
// derives its tree, builds each scoring method's plan and scores every target on the GPU, reporting
// tokens forwarded as it goes. `summarize`: the same scoring, answered with one row of the data-set
// table (logdiff, μ per method, KL_SDCC) instead of every target's scores. The worker handles one
// request at a time, in order; `cancel` is read at once and stops a score at its next forward pass.
import { SEQUENCE_METHODS, type SequenceMethod } from '../../plan/types';
import type { Rollout } from '../../rollout';
import type { HfTokenizerFiles } from '../../rollout/tokenizer-hf';

/** What the worker scores: every method whose plan is a list of sequences (SDCC has none of its own). */
export const SCORED_METHODS = SEQUENCE_METHODS;
export type ScoredMethod = SequenceMethod;

export type ScoreWorkerRequest =
  | { type: 'load'; job: number; bytes: ArrayBuffer; name: string }
  /** A model folder: its files by their names in the folder (`config.json`, `model.safetensors`, …); `name` is the folder's. */
  | { type: 'load-folder'; job: number; name: string; files: ModelFolderBlobs }
  | { type: 'score'; job: number; rollout: Rollout }
  | { type: 'summarize'; job: number; rollout: Rollout }
  /** Stops job `job` (a score or a summary) at its next forward pass; it then fails with CANCELLED. */
  | { type: 'cancel'; job: number };

/** The message of a job stopped by `cancel`. */
export const CANCELLED = 'scoring cancelled';

/**
 * What the page receives of V-wide log-probability rows (the expected drift needs every target's,
 * SDCC's KL those of the diverging leaves): every target's when all methods' together take at most
 * this much, else the diverging leaves' (GPT-2's rows are 201 KB each).
 */
export const ROWS_BUDGET_BYTES = 128 * 2 ** 20;

/** A model folder's files (File or Blob) by their names relative to the folder, as picked or dropped. */
export type ModelFolderBlobs = ReadonlyMap<string, Blob>;

export interface ModelLoaded {
  type: 'loaded';
  job: number;
  /** e.g. "V 272, C 32, 2 layers, 2 heads, P 128" */
  description: string;
  adapter: string;
  /** GPT-2 (a checkpoint file) or a model of the families (a model folder). */
  kind: 'gpt2' | 'family';
  /** A folder's tokenizer files (parsed; null without a tokenizer.json): what its rollouts are imported with. */
  tokenizer: HfTokenizerFiles | null;
}

/** A model folder's weights streamed to the GPU so far, of the folder's total tensor bytes. */
export interface ModelLoadProgress {
  type: 'load-progress';
  job: number;
  bytes: number;
  total: number;
}

/**
 * One method's scores, or why it could not score this rollout (e.g. longer than the model's context):
 * per target (in `ids` order) its log-probability, and the V log-probabilities at the positions of
 * the targets `rowIds` names (flat, rowIds.length × V; every target's, in `ids` order, without rowIds).
 */
export type MethodScores =
  | { method: ScoredMethod; ids: Int32Array; logprobs: Float64Array; rows: Float32Array; rowIds?: Int32Array }
  | { method: ScoredMethod; error: string };

export interface ScoreProgress {
  type: 'progress';
  job: number;
  /** The method being scored, and how many were scored before it, of `total`. */
  method: ScoredMethod;
  done: number;
  total: number;
  /** Rows forwarded so far, of every method's plans together (what a progress bar and an ETA follow). */
  tokens: number;
  tokensTotal: number;
}

export interface Scored {
  type: 'scored';
  job: number;
  rolloutId: string;
  scores: MethodScores[];
  ms: number;
}

/** One rollout's drift as a row of the data-set table: logdiff and μ per method, and KL_SDCC (core/drift.ts `driftRow`). */
export interface DriftRow {
  /** What logdiff and μ are measured against: the rollout's logprobs (this model's) or the exact live-prefix score. */
  reference: 'rollout' | 'live';
  /** null: the method could not score this rollout. */
  methods: Record<ScoredMethod, { logdiff: number; mu: number } | null>;
  klSdcc: number | null;
}

export interface Summarized {
  type: 'summary';
  job: number;
  rolloutId: string;
  row: DriftRow;
}

/** Why a rollout cannot be scored by the loaded model at all: its tokenizer is not the model's (docs/tokenizers.md). */
export function tokenizerMismatchMessage(rolloutId: string, reason: string, modelTokenizer: string): string {
  const fix =
    modelTokenizer === 'gpt2'
      ? 'import a chat or agent log with "text as: GPT-2 word pieces" for this model, or score this rollout with a byte model (the demo model)'
      : modelTokenizer.startsWith('hf:')
        ? `import the chat or agent log with "text as: ${modelTokenizer}" (the model folder's own tokenizer) for this model`
        : 'score it with a GPT-2 checkpoint, or import the log with "text as: bytes" for this model';
  return `rollout "${rolloutId}" ${reason}: ${fix}`;
}

export type ScoreWorkerReply = ModelLoaded | ModelLoadProgress | ScoreProgress | Scored | Summarized | { type: 'error'; job: number; message: string };
