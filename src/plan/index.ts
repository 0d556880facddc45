// The scoring-plan stage: conditioning tree in, what each replay method feeds the model out.
export { buildPlan } from './build';
export { planNeeds } from './needs';
export { visibleKeys } from './visibility';
export * from './types';
