// The page's side of the scoring worker: load a checkpoint or a model folder (progress in bytes), score a rollout, summarize one for the
// data-set table. One worker, created on the first checkpoint; a newer score request makes an older
// one's answer stale (summaries are never stale: the table asks for one rollout at a time); cancel
// stops the score in flight in the worker.
import type { Rollout } from '../../rollout';
import { createJobs } from './jobs';
import type { DriftRow, ModelFolderBlobs, ModelLoaded, Scored, ScoreProgress, ScoreWorkerReply, ScoreWorkerRequest, Summarized } from './score';

export class StaleScoreError extends Error {
  constructor() {
    super('superseded by a newer scoring request');
  }
}

export class ScoreCancelledError extends Error {
  constructor() {
    super('scoring cancelled');
  }
}

export type ScoringProgress = Omit<ScoreProgress, 'type' | 'job'>;

export interface Scorer {
  load(bytes: ArrayBuffer, name: string): Promise<ModelLoaded>;
  /** A model folder's files by name, read by the worker over byte ranges; `onProgress` gets the weights' bytes on the GPU of their total. */
  loadFolder(name: string, files: ModelFolderBlobs, onProgress: (bytes: number, total: number) => void): Promise<ModelLoaded>;
  score(rollout: Rollout, onProgress: (progress: ScoringProgress) => void): Promise<Scored>;
  /** Stops the score in flight: its promise rejects with ScoreCancelledError, the worker stops at its next forward pass. */
  cancelScore(): void;
  summarize(rollout: Rollout): Promise<DriftRow>;
}

export function createScorer(): Scorer {
  const worker = new Worker(new URL('../workers/score.worker.ts', import.meta.url), { type: 'module', name: 'score-worker' });
  const jobs = createJobs<ScoreWorkerReply>('error', 'progress', 'load-progress');
  let latestScore = 0;
  worker.onmessage = (event: MessageEvent<ScoreWorkerReply>) => jobs.settle(event.data);
  worker.onerror = (event) => jobs.failAll(new Error(`the scoring worker failed: ${event.message || 'unknown error'}`));
  return {
    load(bytes, name) {
      return jobs.start<ModelLoaded>((job) => worker.postMessage({ type: 'load', job, bytes, name } satisfies ScoreWorkerRequest, [bytes])).reply;
    },
    loadFolder(name, files, onProgress) {
      return jobs.start<ModelLoaded>(
        (job) => worker.postMessage({ type: 'load-folder', job, name, files } satisfies ScoreWorkerRequest),
        (p) => p.type === 'load-progress' && onProgress(p.bytes, p.total),
      ).reply;
    },
    score(rollout, onProgress) {
      if (latestScore) worker.postMessage({ type: 'cancel', job: latestScore } satisfies ScoreWorkerRequest);
      jobs.drop(latestScore, new StaleScoreError());
      const { job, reply } = jobs.start<Scored>(
        (job) => worker.postMessage({ type: 'score', job, rollout } satisfies ScoreWorkerRequest),
        (p) => p.type === 'progress' && onProgress({ method: p.method, done: p.done, total: p.total, tokens: p.tokens, tokensTotal: p.tokensTotal }),
      );
      latestScore = job;
      return reply;
    },
    cancelScore() {
      if (!latestScore) return;
      worker.postMessage({ type: 'cancel', job: latestScore } satisfies ScoreWorkerRequest);
      jobs.drop(latestScore, new ScoreCancelledError());
      latestScore = 0;
    },
    async summarize(rollout) {
      return (await jobs.start<Summarized>((job) => worker.postMessage({ type: 'summarize', job, rollout } satisfies ScoreWorkerRequest)).reply).row;
    },
  };
}
