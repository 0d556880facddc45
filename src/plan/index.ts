// The scoring-plan stage: conditioning tree in, what each replay method feeds the model out.
export { buildPlan } from './build';
export { packBatch, type BatchTarget, type PackedBatch } from './batch';
export { planToJson, sequenceToJson, type PlanJson, type PlanSequenceJson } from './json';
export { predictorOf, visibleKeys } from './visibility';
export * from './types';
