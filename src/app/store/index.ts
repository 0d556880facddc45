// The workbench store: one zustand store built from slices. Components read it through small
// selectors; non-React code (workers, loops, the URL sync) uses `useWorkbench.getState()` / `subscribe`.
import { create } from 'zustand';
import { createDriftSlice, type DriftSlice } from './driftSlice';
import { createGpuSlice, type GpuSlice } from './gpuSlice';
import { createRolloutSlice, type RolloutSlice } from './rolloutSlice';
import { createViewSlice, type ViewSlice } from './viewSlice';
import { createTrainSlice, type TrainSlice } from '../train/trainSlice';

export type WorkbenchState = GpuSlice & RolloutSlice & ViewSlice & DriftSlice & TrainSlice;

export const useWorkbench = create<WorkbenchState>()((...a) => ({
  ...createGpuSlice(...a),
  ...createRolloutSlice(...a),
  ...createViewSlice(...a),
  ...createDriftSlice(...a),
  ...createTrainSlice(...a),
}));
