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

export function describeConfig(c: ModelConfig): string {
  return `V ${c.vocabSize}, C ${c.nEmbd}, ${c.nLayer} layers, ${c.nHead} heads, P ${c.nPositions}`;
}

/**
 * The largest config a checkpoint may declare, checked before anything is allocated (or the list
 * of expected tensors built): far above every GPT-2 (XL: V 50257, C 1600, 48 layers, 25 heads,
 * P 1024), far below what would exhaust memory on the way to a missing-tensor error. The head size
 * rule is the attention kernels' (`MAX_HS` in src/gpu/kernels/attention/attention.wgsl; a test keeps the two equal).
 */
export const CONFIG_LIMITS = {
  vocabSize: 1 << 20,
  nEmbd: 1 << 14,
  nLayer: 256,
  nHead: 256,
  nPositions: 1 << 20,
  /** Head size C / NH: a multiple of 4 (rows are read as vec4) in 4..64. */
  headSizeMultiple: 4,
  maxHeadSize: 64,
} as const;

/** What in `config` lies outside CONFIG_LIMITS (or is not a positive integer); empty when it fits. */
export function configLimitProblems(config: ModelConfig): string[] {
  const problems: string[] = [];
  const fields: [keyof ModelConfig, string][] = [
    ['vocabSize', 'vocab_size'],
    ['nEmbd', 'n_embd'],
    ['nLayer', 'n_layer'],
    ['nHead', 'n_head'],
    ['nPositions', 'n_positions'],
  ];
  for (const [field, name] of fields) {
    const v = config[field];
    if (!Number.isSafeInteger(v) || v < 1) problems.push(`${name} ${v} is not a positive integer`);
    else if (v > CONFIG_LIMITS[field]) problems.push(`${name} ${v} is above the limit of ${CONFIG_LIMITS[field]}`);
  }
  if (problems.length === 0) {
    const hs = config.nEmbd / config.nHead;
    if (!Number.isInteger(hs)) problems.push(`n_embd ${config.nEmbd} is not divisible by n_head ${config.nHead}`);
    else if (hs % CONFIG_LIMITS.headSizeMultiple !== 0 || hs > CONFIG_LIMITS.maxHeadSize) {
      problems.push(
        `head size ${hs} (n_embd ${config.nEmbd} / n_head ${config.nHead}) is not a multiple of ${CONFIG_LIMITS.headSizeMultiple} ` +
          `in ${CONFIG_LIMITS.headSizeMultiple}..${CONFIG_LIMITS.maxHeadSize}, which the attention kernels need`,
      );
    }
  }
  return problems;
}
