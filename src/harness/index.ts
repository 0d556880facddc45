// The harness stage: environments, memory editors, policies and the rollout loop that turns them
// into docs/rollout-format.md rollouts. Pure TypeScript (no DOM, no GPU): the CLI, the trainer and the browser
// worker all come in through here.

export { runEpisode, endAtLastAction, EPISODE_DEFAULTS, type DecodeRecord, type EpisodeOptions, type EpisodeResult, type EpisodeStop } from './episode';
export { CancelledError, generateDataset, datasetToJsonl, promptSeeds, rolloutSeed, tapeLength, type Dataset, type DatasetConfig, type DatasetHooks, type DatasetSummary } from './dataset';
export { verifyEpisode, type EpisodeCheck } from './verify';
export { NEWLINE, STOP_TOKENS, type Action, type DecodeRequest, type EpisodeInfo, type Policy, type PolicySession } from './policy';
export { createEnv, DEMO_TASK, ENV_IDS, type Env, type EnvId, type EnvSpec, type Episode, type Outcome } from './env';
export {
  createEditor,
  editorSpec,
  editorBudget,
  isEditorKind,
  EDITOR_DEFAULTS,
  EDITOR_KINDS,
  FOLD_PREFIX,
  type Editor,
  type EditorKind,
  type EditorSpec,
} from './editors';
export { createExpertPolicy, expertMove, type ExpertOptions } from './policies/expert';
export { createRandomPolicy, type RandomPolicyOptions } from './policies/random';
export { readView, type ViewBlock } from './framing';
