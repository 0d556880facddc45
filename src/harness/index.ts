// The harness stage: environments, memory editors, policies and the rollout loop that turns them
// into docs/rollout-format.md rollouts. Pure TypeScript (no DOM, no GPU): the CLI, the trainer and the browser
// worker all come in through here.

export { runEpisode } from './episode';
export { generateDataset, datasetToJsonl } from './dataset';
export { createEnv, DEMO_TASK, ENV_IDS, type EnvId, type EnvSpec } from './env';
export { createEditor, editorSpec, EDITOR_DEFAULTS, EDITOR_KINDS, type EditorKind, type EditorSpec } from './editors';
export { createExpertPolicy } from './policies/expert';
export { createRandomPolicy } from './policies/random';
