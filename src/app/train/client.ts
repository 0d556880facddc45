// The page's side of the training worker: one worker, commands out, replies into the store. Requests
// that carry a job (exports, imports, scores) get a promise.
import type { TrainReply, TrainRequest } from '../workers/trainProtocol';

export interface TrainClient {
  send(request: TrainRequest): void;
  /** Sends a request with a fresh job id; resolves with the reply that carries it. */
  request<R extends TrainReply>(make: (job: number) => TrainRequest, transfer?: Transferable[]): Promise<R>;
  terminate(): void;
}

export function createTrainClient(onReply: (reply: TrainReply) => void): TrainClient {
  const worker = new Worker(new URL('../workers/train.worker.ts', import.meta.url), { type: 'module', name: 'train-worker' });
  let job = 0;
  const pending = new Map<number, { resolve(reply: TrainReply): void; reject(error: Error): void }>();
  worker.onmessage = (event: MessageEvent<TrainReply>) => {
    const reply = event.data;
    if ('job' in reply) {
      const p = pending.get(reply.job);
      if (p) {
        pending.delete(reply.job);
        if (reply.type === 'failed') p.reject(new Error(reply.message));
        else p.resolve(reply);
      }
      return;
    }
    onReply(reply);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    onReply({ type: 'status', status: { phase: 'unavailable', reason: `the training worker failed to start: ${event.message}`, cause: 'no-webgpu' } });
  };
  return {
    send(request) {
      worker.postMessage(request);
    },
    request<R extends TrainReply>(make: (job: number) => TrainRequest, transfer: Transferable[] = []) {
      const id = ++job;
      return new Promise<R>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (reply: TrainReply) => void, reject });
        worker.postMessage(make(id), transfer);
      });
    },
    terminate() {
      worker.terminate();
      for (const p of pending.values()) p.reject(new Error('the training worker stopped'));
      pending.clear();
    },
  };
}
