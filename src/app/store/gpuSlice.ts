// GPU slice: what the page knows about WebGPU: probing, the adapter in use, or why there is none.
import { adapterLine, createGpu, GpuUnavailableError } from '../../gpu/runtime/device';
import type { GpuSlice, Slice } from './types';

export const createGpuSlice: Slice<GpuSlice> = (set, get) => ({
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
