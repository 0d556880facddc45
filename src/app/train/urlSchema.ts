// The run configuration in the URL, declared once like the view state (../url/schema.ts): key,
// type, allowed values and help per field. It lives in the fragment (`#preset=tiny&methods=…`)
// beside the view's query string, which the view's URL sync rewrites without touching the
// fragment. Only fields that differ from the preset's defaults are written; the seed always is.

import { EDITOR_KINDS, ENV_IDS } from '../../harness';
import { METHODS, type Method } from '../../plan/types';
import { defaultRunConfig, OBJECTIVES, orderedMethods, PRESETS, type RunConfig } from '../../run/config';

type Value = string | number | null | Method[];

interface FieldBase {
  key: string;
  help: string;
}
type Field =
  | (FieldBase & { type: 'enum'; values: readonly string[] })
  | (FieldBase & { type: 'int'; min: number; max: number })
  | (FieldBase & { type: 'float'; min: number; max: number })
  | (FieldBase & { type: 'string' })
  | (FieldBase & { type: 'methods' });

export const RUN_URL_SCHEMA: Record<keyof RunConfig, Field> = {
  preset: { type: 'enum', key: 'preset', values: PRESETS, help: 'model preset when starting from fresh weights' },
  checkpoint: { type: 'string', key: 'ckpt', help: 'a GPT-2 checkpoint kept in this browser to start from' },
  env: { type: 'enum', key: 'env', values: ENV_IDS, help: 'environment' },
  difficulty: { type: 'int', key: 'difficulty', min: 1, max: 8, help: 'hops (lookup) or pages (collect)' },
  distractors: { type: 'int', key: 'distractors', min: 0, max: 8, help: 'distractor facts or decoy pages per observation' },
  filler: { type: 'int', key: 'filler', min: 0, max: 400, help: 'filler characters per observation' },
  editor: { type: 'enum', key: 'editor', values: EDITOR_KINDS, help: 'memory editor of the harness' },
  budget: { type: 'int', key: 'budget', min: 8, max: 4096, help: "the editor's token budget" },
  actTokens: { type: 'int', key: 'act', min: 4, max: 256, help: 'most tokens per action' },
  methods: { type: 'methods', key: 'methods', help: 'methods trained side by side (comma-separated)' },
  lambda: { type: 'float', key: 'lambda', min: 0, max: 100, help: "SDCC's KL weight" },
  objective: { type: 'enum', key: 'objective', values: OBJECTIVES, help: 'sft (expert demonstrations) or rl (the model plays)' },
  lr: { type: 'float', key: 'lr', min: 1e-7, max: 1, help: 'peak learning rate' },
  batch: { type: 'int', key: 'batch', min: 1, max: 4096, help: 'prompts per step' },
  group: { type: 'int', key: 'group', min: 1, max: 64, help: 'rollouts per prompt (RL)' },
  seed: { type: 'int', key: 'seed', min: 0, max: 2 ** 32 - 1, help: 'seed of the weights, prompts and sampling' },
  steps: { type: 'int', key: 'steps', min: 0, max: 1_000_000, help: 'steps of a fixed-length run (0: until paused)' },
  checkpointEvery: { type: 'int', key: 'ckptEvery', min: 1, max: 100_000, help: 'steps between stored checkpoints' },
  evalEvery: { type: 'int', key: 'evalEvery', min: 0, max: 100_000, help: 'steps between greedy evaluations on held-out prompts (0: none)' },
};

const NAMES = Object.keys(RUN_URL_SCHEMA) as (keyof RunConfig)[];

function read(field: Field, raw: string): Value | undefined {
  switch (field.type) {
    case 'enum':
      return field.values.includes(raw) ? raw : undefined;
    case 'int': {
      if (!/^\d+$/.test(raw)) return undefined;
      const n = Number(raw);
      return Number.isSafeInteger(n) && n >= field.min && n <= field.max ? n : undefined;
    }
    case 'float': {
      const n = Number(raw);
      return raw !== '' && Number.isFinite(n) && n >= field.min && n <= field.max ? n : undefined;
    }
    case 'string':
      return raw === '' ? undefined : raw;
    case 'methods': {
      const list = raw.split(',').filter((m): m is Method => (METHODS as readonly string[]).includes(m));
      return list.length ? orderedMethods([...new Set(list)]) : undefined;
    }
  }
}

function write(value: Value): string {
  return Array.isArray(value) ? orderedMethods(value).join(',') : String(value);
}

/** The run config a fragment names (with or without `#`); unreadable values fall back to defaults. */
export function parseRunFragment(fragment: string): RunConfig | null {
  const params = new URLSearchParams(fragment.replace(/^#/, ''));
  if (!NAMES.some((n) => params.has(RUN_URL_SCHEMA[n].key))) return null;
  const presetRaw = params.get(RUN_URL_SCHEMA.preset.key);
  const config = defaultRunConfig(presetRaw && (PRESETS as readonly string[]).includes(presetRaw) ? (presetRaw as RunConfig['preset']) : 'tiny') as unknown as Record<string, Value>;
  for (const name of NAMES) {
    const raw = params.get(RUN_URL_SCHEMA[name].key);
    if (raw === null) continue;
    const value = read(RUN_URL_SCHEMA[name], raw);
    if (value !== undefined) config[name] = value;
  }
  return config as unknown as RunConfig;
}

/** The fragment for a config: the preset and seed always, other fields where they differ from the preset's defaults. */
export function serializeRunFragment(config: RunConfig): string {
  const defaults = defaultRunConfig(config.preset) as unknown as Record<string, Value>;
  const params = new URLSearchParams();
  for (const name of NAMES) {
    const value = (config as unknown as Record<string, Value>)[name];
    if (value === null) continue;
    if (name !== 'preset' && name !== 'seed' && write(value) === write(defaults[name])) continue;
    params.set(RUN_URL_SCHEMA[name].key, write(value));
  }
  return `#${params.toString().replace(/%2C/g, ',')}`;
}
