// The run configuration in the URL, declared like the view state (../url/schema.ts, read and written
// by ../url/fields.ts): key, type, allowed values and help per field. It lives in the fragment
// (`#preset=tiny&methods=…`) beside the view's query string, which the view's URL sync rewrites
// without touching the fragment. Only fields that differ from the preset's defaults are written; the
// seed always is.

import { EDITOR_KINDS, ENV_IDS } from '../../harness';
import { METHODS } from '../../plan/types';
import { hasFields, readFields, writeFields, type Schema } from '../url/fields';
import { defaultRunConfig, OBJECTIVES, PRESETS, type RunConfig } from '../../run/config';

export const RUN_URL_SCHEMA: Schema<RunConfig> = {
  preset: { type: 'enum', key: 'preset', values: PRESETS, help: 'model preset when starting from fresh weights' },
  checkpoint: { type: 'string', key: 'ckpt', help: 'a GPT-2 checkpoint kept in this browser to start from' },
  env: { type: 'enum', key: 'env', values: ENV_IDS, help: 'environment' },
  difficulty: { type: 'int', key: 'difficulty', min: 1, max: 8, help: 'hops (lookup) or pages (collect)' },
  distractors: { type: 'int', key: 'distractors', min: 0, max: 8, help: 'distractor facts or decoy pages per observation' },
  filler: { type: 'int', key: 'filler', min: 0, max: 400, help: 'filler characters per observation' },
  editor: { type: 'enum', key: 'editor', values: EDITOR_KINDS, help: 'memory editor of the harness' },
  budget: { type: 'int', key: 'budget', min: 8, max: 4096, help: "the editor's token budget" },
  actTokens: { type: 'int', key: 'act', min: 4, max: 256, help: 'most tokens per action' },
  methods: { type: 'subset', key: 'methods', values: METHODS, help: 'methods trained side by side (comma-separated)' },
  lambda: { type: 'float', key: 'lambda', min: 0, max: 100, help: "SDCC's KL weight" },
  objective: { type: 'enum', key: 'objective', values: OBJECTIVES, help: 'sft (expert demonstrations) or rl (the model plays)' },
  lr: { type: 'float', key: 'lr', min: 1e-7, max: 1, help: 'peak learning rate' },
  batch: { type: 'int', key: 'batch', min: 1, max: 4096, help: 'prompts per step' },
  group: { type: 'int', key: 'group', min: 1, max: 64, help: 'rollouts per prompt (RL)' },
  seed: { type: 'int', key: 'seed', min: 0, max: 2 ** 32 - 1, help: 'seed of the weights, prompts and sampling' },
  steps: { type: 'int', key: 'steps', min: 0, max: 1_000_000, help: 'steps of a fixed-length run (0: until paused)' },
  checkpointEvery: { type: 'int', key: 'ckptEvery', min: 1, max: 100_000, help: 'steps between stored checkpoints' },
  evalEvery: { type: 'int', key: 'evalEvery', min: 0, max: 100_000, help: 'steps between greedy evaluations on held-out prompts (0: none)' },
  evalPrompts: { type: 'int', key: 'evalN', min: 1, max: 4096, help: 'held-out prompts each evaluation plays' },
};

/** The run config a fragment names (with or without `#`); unreadable values fall back to the preset's defaults. */
export function parseRunFragment(fragment: string): RunConfig | null {
  const params = new URLSearchParams(fragment.replace(/^#/, ''));
  if (!hasFields(RUN_URL_SCHEMA, params)) return null;
  const { preset } = readFields(RUN_URL_SCHEMA, params, defaultRunConfig('tiny'));
  return readFields(RUN_URL_SCHEMA, params, defaultRunConfig(preset));
}

/** The fragment for a config: the preset and seed always, other fields where they differ from the preset's defaults. */
export function serializeRunFragment(config: RunConfig): string {
  const params = writeFields(RUN_URL_SCHEMA, config, defaultRunConfig(config.preset), ['preset', 'seed']);
  return `#${params.toString().replace(/%2C/g, ',')}`;
}
