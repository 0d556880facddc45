// The harness stage: environments, memory editors, policies and the rollout loop that turns them
// into docs/rollout-format.md rollouts. Pure TypeScript (no DOM, no GPU). The barrel holds what
// the app, the run config and the tests import through it; other modules import the files.

export { runEpisode } from './episode';
export { generateDataset, datasetToJsonl } from './dataset';
export { createEnv, DEMO_TASK, ENV_IDS, type EnvId, type EnvSpec } from './env';
export { createEditor, editorSpec, EDITOR_DEFAULTS, EDITOR_KINDS, type EditorKind } from './editors';
export { createExpertPolicy } from './policies/expert';
export { createRandomPolicy } from './policies/random';
