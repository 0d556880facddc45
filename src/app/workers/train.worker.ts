// The training worker: the run controller (src/run/controller.ts) in a worker, so the page never
// waits on the GPU. TrainRequest messages become calls; the controller's events and the answers to
// requests with a `job` go back as TrainReply messages (../protocol/train.ts). The worker adds what only
// a browser has: WebGPU, IndexedDB (../persist/trainRun.ts) and the one-engine-per-profile lock.
/// <reference lib="webworker" />
import { createGpu } from '../../gpu/runtime/device';
import { createRunController } from '../../run/controller';
import { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun } from '../persist/trainRun';
import type { TrainReply, TrainRequest } from '../protocol/train';

declare const self: DedicatedWorkerGlobalScope;

const post = (reply: TrainReply, transfer: Transferable[] = []) => self.postMessage(reply, transfer);

/**
 * One training engine per browser profile: the run in IndexedDB is one, and two tabs stepping it
 * would overwrite each other's checkpoints. The lock is held for the worker's life; a page that
 * reloads waits briefly for its predecessor's worker to let go, another tab waits until it closes.
 */
async function holdEngineLock(busy: () => void): Promise<void> {
  const locks = (navigator as Navigator & { locks?: LockManager }).locks;
  if (!locks) return;
  await new Promise<void>((resolve) => {
    const waiting = setTimeout(busy, 3000);
    void locks.request('memorywalker-train-engine', () => {
      clearTimeout(waiting);
      resolve();
      return new Promise<void>(() => undefined);
    });
  });
}

const controller = createRunController({
  createGpu: () => createGpu(),
  store: { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun },
  emit: post,
  lock: holdEngineLock,
});

/** Requests with a job answer `failed` with the reason instead of their reply. */
function answer(job: number, work: () => Promise<void>): void {
  work().catch((error: unknown) => post({ type: 'failed', job, message: error instanceof Error ? error.message : String(error) }));
}

self.onmessage = (event: MessageEvent<TrainRequest>) => {
  const request = event.data;
  switch (request.type) {
    case 'hello':
      return controller.hello();
    case 'start':
      return controller.start(request.config, !!request.paused);
    case 'play':
      return controller.play();
    case 'pause':
      return controller.pause();
    case 'step':
      return controller.step(request.config);
    case 'reset':
      return controller.reset();
    case 'import-checkpoint':
      return answer(request.job, async () => post({ type: 'imported', job: request.job, ...(await controller.importCheckpoint(request.name, request.bytes)) }));
    case 'export-checkpoint':
      return answer(request.job, async () => {
        const file = await controller.exportCheckpoint(request.method);
        post({ type: 'checkpoint-file', job: request.job, ...file }, [file.weights.buffer as ArrayBuffer, file.optimizer.buffer as ArrayBuffer]);
      });
    case 'fork-checkpoint':
      return answer(request.job, async () => post({ type: 'forked', job: request.job, ...(await controller.forkCheckpoint(request.method)) }));
    case 'rollout':
      return answer(request.job, async () => post({ type: 'rollout', job: request.job, rollout: await controller.rollout(request.method, request.id) }));
    case 'score':
      return answer(request.job, async () =>
        post({ type: 'scores', job: request.job, method: request.method, id: request.id, scores: await controller.score(request.method, request.id) }),
      );
  }
};
