// The page's side of the scoring worker: load a checkpoint, score a rollout. One worker, created
// on the first checkpoint; a newer score request makes an older one's answer stale.
import type { Rollout } from '../../rollout';
import type { ModelLoaded, Scored, ScoredMethod, ScoreWorkerReply, ScoreWorkerRequest } from './scoreProtocol';

export class StaleScoreError extends Error {
  constructor() {
    super('superseded by a newer scoring request');
  }
}

export interface Scorer {
  load(bytes: ArrayBuffer, name: string): Promise<ModelLoaded>;
  score(rollout: Rollout, onProgress: (method: ScoredMethod, done: number, total: number) => void): Promise<Scored>;
}

export function createScorer(): Scorer {
  const worker = new Worker(new URL('./score.worker.ts', import.meta.url), { type: 'module', name: 'score-worker' });
  let job = 0;
  let latestScore = 0;
  const pending = new Map<number, { resolve(r: ScoreWorkerReply): void; reject(e: Error): void; onProgress?: (m: ScoredMethod, d: number, t: number) => void }>();
  worker.onmessage = (event: MessageEvent<ScoreWorkerReply>) => {
    const reply = event.data;
    const p = pending.get(reply.job);
    if (!p) return;
    if (reply.type === 'progress') return p.onProgress?.(reply.method, reply.done, reply.total);
    pending.delete(reply.job);
    if (reply.type === 'error') p.reject(new Error(reply.message));
    else p.resolve(reply);
  };
  worker.onerror = (event) => {
    for (const p of pending.values()) p.reject(new Error(`the scoring worker failed: ${event.message || 'unknown error'}`));
    pending.clear();
  };
  const send = (request: ScoreWorkerRequest, transfer: Transferable[] = []) => worker.postMessage(request, transfer);
  return {
    load(bytes, name) {
      const id = ++job;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: (r) => resolve(r as ModelLoaded), reject });
        send({ type: 'load', job: id, bytes, name }, [bytes]);
      });
    },
    score(rollout, onProgress) {
      const stale = pending.get(latestScore);
      if (stale) {
        pending.delete(latestScore);
        stale.reject(new StaleScoreError());
      }
      const id = (latestScore = ++job);
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve: (r) => resolve(r as Scored), reject, onProgress });
        send({ type: 'score', job: id, rollout });
      });
    },
  };
}
