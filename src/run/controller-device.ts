// The run controller's device: made on demand, its uncaptured errors reported, its loss handed to
// the controller (unless the controller destroyed it itself), and GPU work serialized on it.

import { adapterLine, GpuUnavailableError, type Gpu } from '../gpu/runtime/device';
import { setStatus, type ControllerState } from './controller-state';

/** The run's device, made if there is none; null (status 'unavailable') without WebGPU. */
export async function ensureGpu(run: ControllerState, onLost: (lost: Gpu, message: string) => void): Promise<Gpu | null> {
  if (run.gpu) return run.gpu;
  const { emit } = run.deps;
  try {
    const created = await run.deps.createGpu();
    run.gpu = created;
    emit({ type: 'gpu', ok: true, adapter: adapterLine(created.info), software: created.info.isSoftware });
    created.onEvent((event) => {
      if (event.type === 'uncaptured-error') emit({ type: 'gpu-error', message: `${event.kind}: ${event.message}` });
    });
    void created.lost.then((event) => {
      if (!run.retired.has(created)) onLost(created, event.message || `the device was lost (${event.reason})`);
    });
    return created;
  } catch (error) {
    const reason = error instanceof GpuUnavailableError ? error.reason : 'error';
    const message = error instanceof Error ? error.message : String(error);
    emit({ type: 'gpu', ok: false, reason, message });
    setStatus(run, 'unavailable', message, 'no-webgpu');
    return null;
  }
}

/** Runs `work` after the GPU work queued before it (steps, checkpoints, exports and scores never interleave). */
export function withGpu<T>(run: ControllerState, work: () => Promise<T>): Promise<T> {
  const next = run.gpuTail.then(work, work);
  run.gpuTail = next.catch(() => undefined);
  return next;
}

/** Whether `device` is lost or retired (its loss may be reported just after a step's error, so this waits briefly for it). */
export async function deviceGone(run: ControllerState, device: Gpu, waitMs = 250): Promise<boolean> {
  if (run.retired.has(device)) return true;
  return Promise.race([device.lost.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), waitMs))]);
}
