// The page's side of the training worker: one worker, commands out, replies into the store. Requests
// that carry a job (exports, imports, scores) get a promise.
import { createJobs } from './jobs';
import type { TrainReply, TrainRequest } from './train';

export interface TrainClient {
  send(request: TrainRequest): void;
  /** Sends a request with a fresh job id; resolves with the reply that carries it. */
  request<R extends TrainReply>(make: (job: number) => TrainRequest, transfer?: Transferable[]): Promise<R>;
}

export function createTrainClient(onReply: (reply: TrainReply) => void): TrainClient {
  const worker = new Worker(new URL('../workers/train.worker.ts', import.meta.url), { type: 'module', name: 'train-worker' });
  const jobs = createJobs<Extract<TrainReply, { job: number }>>('failed');
  worker.onmessage = (event: MessageEvent<TrainReply>) => {
    const reply = event.data;
    if ('job' in reply) jobs.settle(reply);
    else onReply(reply);
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
      return jobs.start((job) => worker.postMessage(make(job), transfer)).reply as Promise<R>;
    },
  };
}
