// The page's side of the rollout worker: one worker, a promise per job, progress through a
// callback. A newer parse makes an older one stale (its promise rejects with StaleParseError).
import type { Rollout } from '../../rollout';
import type { DemoConfig, ParsePhase, RolloutSummary, WorkerReply, WorkerRequest } from './protocol';

export interface ParseOutcome {
  /** The job that parsed the set: names it in later `rollout` requests. */
  set: number;
  summaries: RolloutSummary[];
  index: number;
  rollout: Rollout;
  readMs: number;
  validateMs: number;
}

export class StaleParseError extends Error {
  constructor() {
    super('superseded by a newer file');
  }
}

export interface ParseOptions {
  /** Rollout id to send along (default: the first). */
  select: string | null;
  /** The set the page shows now, kept by the worker until this parse succeeds. */
  keep: number | null;
}

export interface Parser {
  parse(blob: Blob, fileName: string, options: ParseOptions, onProgress: (phase: ParsePhase, done: number, total: number) => void): Promise<ParseOutcome>;
  /** Rollout `index` of a parsed set. */
  rollout(set: number, index: number): Promise<Rollout>;
  /** A demo data set from the harness, as JSONL text. */
  generate(config: DemoConfig): Promise<string>;
}

interface Pending {
  resolve(reply: WorkerReply): void;
  reject(error: Error): void;
  onProgress?: (phase: ParsePhase, done: number, total: number) => void;
}

export function createParser(): Parser {
  let worker: Worker | null = null;
  let job = 0;
  let latestParse = 0;
  const pending = new Map<number, Pending>();

  const ensure = (): Worker => {
    if (worker) return worker;
    worker = new Worker(new URL('./parse.worker.ts', import.meta.url), { type: 'module', name: 'rollout-worker' });
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = event.data;
      const p = pending.get(reply.job);
      if (!p) return;
      if (reply.type === 'progress') p.onProgress?.(reply.phase, reply.done, reply.total);
      else {
        pending.delete(reply.job);
        if (reply.type === 'error') p.reject(new Error(reply.message));
        else p.resolve(reply);
      }
    };
    worker.onerror = (event) => {
      const error = new Error(`the rollout worker failed: ${event.message || 'unknown error'}`);
      for (const p of pending.values()) p.reject(error);
      pending.clear();
      worker?.terminate();
      worker = null;
    };
    return worker;
  };

  const send = (request: WorkerRequest, p: Pending) => {
    pending.set(request.job, p);
    ensure().postMessage(request);
  };

  return {
    parse(blob, fileName, options, onProgress) {
      const stale = pending.get(latestParse);
      if (stale) {
        pending.delete(latestParse);
        stale.reject(new StaleParseError());
      }
      const id = (latestParse = ++job);
      return new Promise<ParseOutcome>((resolve, reject) =>
        send(
          { type: 'parse', job: id, blob, fileName, select: options.select, keep: options.keep },
          { resolve: (r) => resolve({ ...(r as Omit<ParseOutcome, 'set'>), set: id }), reject, onProgress },
        ),
      );
    },
    rollout(set, index) {
      const id = ++job;
      return new Promise<Rollout>((resolve, reject) =>
        send({ type: 'rollout', job: id, set, index }, { resolve: (r) => resolve((r as { rollout: Rollout }).rollout), reject }),
      );
    },
    generate(config) {
      const id = ++job;
      return new Promise<string>((resolve, reject) =>
        send({ type: 'generate', job: id, config }, { resolve: (r) => resolve((r as { text: string }).text), reject }),
      );
    },
  };
}
