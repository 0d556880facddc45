// The workbench store: one zustand store built from slices (typed in ./types). Components read it
// through small selectors; non-React code (workers, loops, the URL sync) uses `useWorkbench.getState()` / `subscribe`.
import { create } from 'zustand';
import { createDatasetSlice } from './datasetSlice';
import { createContextSlice } from './contextSlice';
import { createDriftSlice } from './driftSlice';
import { createGlossarySlice } from './glossarySlice';
import { createGpuSlice } from './gpuSlice';
import { createPlaygroundSlice } from './playgroundSlice';
import { createHubSlice } from './hubSlice';
import { createRolloutSlice } from './rolloutSlice';
import { createTourSlice } from './tourSlice';
import { createTrainSlice } from './trainSlice';
import type { WorkbenchState } from './types';
import { createViewSlice } from './viewSlice';

export const useWorkbench = create<WorkbenchState>()((...a) => ({
  ...createGpuSlice(...a),
  ...createRolloutSlice(...a),
  ...createViewSlice(...a),
  ...createDriftSlice(...a),
  ...createHubSlice(...a),
  ...createDatasetSlice(...a),
  ...createTrainSlice(...a),
  ...createTourSlice(...a),
  ...createGlossarySlice(...a),
  ...createContextSlice(...a),
  ...createPlaygroundSlice(...a),
}));
