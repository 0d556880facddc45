// The workbench store: one zustand store built from slices. Components read it through small
// selectors; non-React code (workers, loops) uses `useWorkbench.getState()` / `subscribe`.
import { create } from 'zustand';
import { createGpuSlice, type GpuSlice } from './gpuSlice';

export type WorkbenchState = GpuSlice;

export const useWorkbench = create<WorkbenchState>()((...a) => ({
  ...createGpuSlice(...a),
}));
