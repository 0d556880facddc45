// GPU slice: what the page knows about WebGPU: probing, the adapter in use, or why there is none.
import type { StateCreator } from 'zustand';
import { adapterLine, createGpu, GpuUnavailableError, type AdapterSummary, type GpuEvent } from '../../gpu/device';
import type { WorkbenchState } from './index';

export type GpuStatus =
  | { kind: 'probing' }
  | { kind: 'ready'; adapter: AdapterSummary; line: string }
  | { kind: 'unavailable'; reason: string; message: string };

export interface GpuSlice {
  gpu: GpuStatus;
  gpuEvents: GpuEvent[];
  probeGpu(): Promise<void>;
}

export const createGpuSlice: StateCreator<WorkbenchState, [], [], GpuSlice> = (set, get) => ({
  gpu: { kind: 'probing' },
  gpuEvents: [],
  async probeGpu() {
    if (get().gpu.kind === 'ready') return;
    try {
      const gpu = await createGpu();
      set({ gpu: { kind: 'ready', adapter: gpu.info, line: adapterLine(gpu.info) } });
      gpu.onEvent((event) => set((state) => ({ gpuEvents: [...state.gpuEvents.slice(-19), event] })));
      // The page keeps no device of its own: it only reports the adapter. Work runs elsewhere.
      gpu.destroy();
    } catch (err) {
      const reason = err instanceof GpuUnavailableError ? err.reason : 'error';
      set({ gpu: { kind: 'unavailable', reason, message: err instanceof Error ? err.message : String(err) } });
    }
  },
});
