// Messages between the page and the scoring worker, which owns the WebGPU device and the model.
// `load`: a GPT-2 safetensors checkpoint (bytes moved, not copied). `score`: one rollout; the worker
// derives its tree, builds each scoring method's plan and scores every target on the GPU.
// `summarize`: the same scoring, answered with one row of the data-set table (logdiff, μ per method,
// KL_SDCC) instead of every target's scores. The worker handles one request at a time, in order.
import type { Rollout } from '../../rollout';

export const SCORED_METHODS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const;
export type ScoredMethod = (typeof SCORED_METHODS)[number];

export interface LoadModelRequest {
  type: 'load';
  job: number;
  bytes: ArrayBuffer;
  name: string;
}

export interface ScoreRequest {
  type: 'score';
  job: number;
  rollout: Rollout;
}

export interface SummarizeRequest {
  type: 'summarize';
  job: number;
  rollout: Rollout;
}

export type ScoreWorkerRequest = LoadModelRequest | ScoreRequest | SummarizeRequest;

export interface ModelLoaded {
  type: 'loaded';
  job: number;
  /** e.g. "V 272, C 32, 2 layers, 2 heads, P 128" */
  description: string;
  adapter: string;
}

/**
 * One method's scores, or why it could not score this rollout (e.g. longer than the model's context):
 * per target (in `ids` order) its log-probability and the V log-probabilities at its position (flat, R × V).
 */
export type MethodScores = { method: ScoredMethod; ids: Int32Array; logprobs: Float64Array; rows: Float32Array } | { method: ScoredMethod; error: string };

export interface ScoreProgress {
  type: 'progress';
  job: number;
  method: ScoredMethod;
  done: number;
  total: number;
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

export interface ScoreFailed {
  type: 'error';
  job: number;
  message: string;
}

export type ScoreWorkerReply = ModelLoaded | ScoreProgress | Scored | Summarized | ScoreFailed;
