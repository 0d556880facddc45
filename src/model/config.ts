// GPT-2 model configuration (docs/model.md): the five numbers that fix every tensor shape.
// Names follow the paper-style short forms used in shape comments: V, C, NL, NH, P; HS = C / NH.

export interface ModelConfig {
  vocabSize: number; // V
  nEmbd: number; // C
  nLayer: number; // NL
  nHead: number; // NH
  nPositions: number; // P
}

/** Vocabulary of the byte tokenizer with its special ids (docs/rollout-format.md). */
export const BYTE_VOCAB_SIZE = 272;

export const MODEL_PRESETS = {
  default: { vocabSize: BYTE_VOCAB_SIZE, nEmbd: 128, nLayer: 4, nHead: 4, nPositions: 1024 },
  /** The demo checkpoint's size: trains in minutes on a CPU-emulated GPU. */
  small: { vocabSize: BYTE_VOCAB_SIZE, nEmbd: 64, nLayer: 2, nHead: 4, nPositions: 1024 },
  tiny: { vocabSize: BYTE_VOCAB_SIZE, nEmbd: 32, nLayer: 2, nHead: 2, nPositions: 128 },
} as const satisfies Record<string, ModelConfig>;

export type ModelPreset = keyof typeof MODEL_PRESETS;

export function presetConfig(name: ModelPreset): ModelConfig {
  const preset = MODEL_PRESETS[name];
  if (!preset) throw new Error(`unknown model preset "${name}"; known: ${Object.keys(MODEL_PRESETS).join(', ')}`);
  return { ...preset };
}

export function headSize(config: ModelConfig): number {
  return config.nEmbd / config.nHead;
}

/** Throws one error listing every problem; returns the config unchanged when it is valid. */
export function validateConfig(config: ModelConfig): ModelConfig {
  const problems: string[] = [];
  const fields: (keyof ModelConfig)[] = ['vocabSize', 'nEmbd', 'nLayer', 'nHead', 'nPositions'];
  for (const f of fields) {
    const v = config[f];
    if (!Number.isSafeInteger(v) || v < 1) problems.push(`${f} must be a positive integer, got ${v}`);
  }
  if (problems.length === 0 && config.nEmbd % config.nHead !== 0) {
    problems.push(`nEmbd (${config.nEmbd}) must be divisible by nHead (${config.nHead})`);
  }
  if (problems.length) throw new Error(`invalid model config: ${problems.join('; ')}`);
  return config;
}

export function configsEqual(a: ModelConfig, b: ModelConfig): boolean {
  return a.vocabSize === b.vocabSize && a.nEmbd === b.nEmbd && a.nLayer === b.nLayer && a.nHead === b.nHead && a.nPositions === b.nPositions;
}

export function describeConfig(c: ModelConfig): string {
  return `V ${c.vocabSize}, C ${c.nEmbd}, ${c.nLayer} layers, ${c.nHead} heads, P ${c.nPositions}`;
}
