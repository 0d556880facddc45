// The scoring-plan stage: conditioning tree in, what each replay method feeds the model out.
export { buildPlan, sdccUnion, type SdccUnion } from './build';
export { packBatch, packSdccBatch, type BatchTarget, type PackedBatch, type SdccBatch } from './batch';
export { planToJson, sequenceToJson, type PlanJson } from './json';
export { methodNeeds, planNeeds, unfitReason, type PlanNeeds } from './needs';
export { assembleStep, EXACT_METHODS, type StepLayout, type StepLayoutOptions } from './step';
export { predictorOf, visibleKeys } from './visibility';
export * from './types';
