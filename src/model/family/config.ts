// The decoder family of Llama 3.x / SmolLM2 (`LlamaForCausalLM`), Qwen2.5 (`Qwen2ForCausalLM`: q/k/v
// biases) and Qwen3 (`Qwen3ForCausalLM`: RMSNorm of q and k per head before RoPE), configured from a
// Hugging Face `config.json` (docs/model.md). GPT-2 keeps its own config (../config.ts).

export type FamilyArchitecture = 'LlamaForCausalLM' | 'Qwen2ForCausalLM' | 'Qwen3ForCausalLM';

export const FAMILY_ARCHITECTURES: readonly FamilyArchitecture[] = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'];

/** RoPE frequency scaling as `config.json` writes it; any other `rope_type` is refused with its name. */
export type RopeScaling =
  | { type: 'none' }
  | { type: 'linear'; factor: number }
  | { type: 'llama3'; factor: number; lowFreqFactor: number; highFreqFactor: number; originalMaxPositionEmbeddings: number };

export interface FamilyConfig {
  architecture: FamilyArchitecture;
  /** `_name_or_path` (or the folder's name): what a rollout's `"tokenizer": "hf:<name>"` names. */
  name: string;
  vocabSize: number; // V
  hiddenSize: number; // C
  intermediateSize: number; // FF (SwiGLU width)
  nLayer: number; // NL
  nHead: number; // NH (query heads)
  nKvHead: number; // NKV (key/value heads; NH % NKV == 0, grouped-query attention)
  headDim: number; // HS (64 or 128; `head_dim`, else C / NH)
  ropeTheta: number;
  ropeScaling: RopeScaling;
  rmsNormEps: number;
  tieWordEmbeddings: boolean;
  maxPositionEmbeddings: number; // P
  /** Qwen2: q/k/v projections carry biases. */
  qkvBias: boolean;
  /**
   * The output projection carries a bias: Llama with `attention_bias` (transformers gives q, k, v and o
   * biases then); never Qwen2 (q/k/v only) or Qwen3. Absent (older configs): false.
   */
  oBias?: boolean;
  /** Qwen3: `q_norm` / `k_norm` RMSNorm (weight of HS) per head before RoPE. */
  qkNorm: boolean;
}

/** Storage types of tensors in a published model folder; 16-bit ones stay 16-bit on the GPU. */
export type WeightDtype = 'BF16' | 'F16' | 'F32';

/**
 * One tensor of a model folder, streamed (one at a time, in file order) so that neither the page nor
 * Node holds the whole file: `data` is the raw little-endian bytes of the tensor as stored.
 */
export interface FolderTensor {
  /** Hugging Face parameter name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  dtype: WeightDtype;
  shape: readonly number[];
  data: Uint8Array;
}

/** The tensors of a model folder, yielded one by one; the total lets loaders report progress in bytes. */
export interface FolderTensorSource {
  totalBytes: number;
  tensors(): AsyncIterable<FolderTensor>;
}

// ---------------------------------------------------------------------------------------------
// config.json → FamilyConfig, and the parameters of each family as the Hub names them.

/** The largest head size the family's attention kernels take (the "head size up to 128"). */
export const FAMILY_MAX_HEAD_DIM = 128;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A Hugging Face `config.json` (parsed) as a FamilyConfig; `fallbackName` (the folder's name) when it
 * carries no `_name_or_path`. Throws one line listing every problem.
 */
export function parseFamilyConfig(json: unknown, fallbackName = 'model'): FamilyConfig {
  if (!isObject(json)) throw new Error('config.json: not a JSON object');
  const problems: string[] = [];
  const architectures = json.architectures;
  const arch = Array.isArray(architectures) && architectures.length === 1 ? architectures[0] : architectures;
  if (typeof arch !== 'string' || !(FAMILY_ARCHITECTURES as readonly string[]).includes(arch)) {
    throw new Error(
      `config.json: architectures ${JSON.stringify(architectures)} is not one of ${FAMILY_ARCHITECTURES.join(', ')} (GPT-2 checkpoints are read as .safetensors)`,
    );
  }
  const architecture = arch as FamilyArchitecture;
  const int = (key: string, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (v === undefined) problems.push(`${key} is missing`);
    else if (!Number.isSafeInteger(v) || (v as number) < 1) problems.push(`${key} must be a positive integer, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const positive = (key: string, fallback: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) problems.push(`${key} must be a positive number, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const vocabSize = int('vocab_size');
  const hiddenSize = int('hidden_size');
  const intermediateSize = int('intermediate_size');
  const nLayer = int('num_hidden_layers');
  const nHead = int('num_attention_heads');
  const nKvHead = int('num_key_value_heads', json.num_attention_heads as number);
  const headDim = int('head_dim', Number.isSafeInteger(hiddenSize) && Number.isSafeInteger(nHead) ? hiddenSize / nHead : undefined);
  const ropeTheta = positive('rope_theta', 10000);
  const rmsNormEps = positive('rms_norm_eps', 1e-6);
  const maxPositionEmbeddings = int('max_position_embeddings');
  const tie = json.tie_word_embeddings ?? false;
  if (typeof tie !== 'boolean') problems.push(`tie_word_embeddings must be true or false, got ${JSON.stringify(tie)}`);
  const act = json.hidden_act ?? 'silu';
  if (act !== 'silu') problems.push(`hidden_act ${JSON.stringify(act)} is not silu (the family's SwiGLU)`);
  if (json.use_sliding_window === true) problems.push('use_sliding_window is true (sliding-window attention is not supported)');
  const attentionBias = json.attention_bias ?? false;
  if (typeof attentionBias !== 'boolean') problems.push(`attention_bias must be true or false, got ${JSON.stringify(attentionBias)}`);
  if (json.mlp_bias === true) problems.push('mlp_bias is true (the family has no MLP biases)');
  const ok = (...v: number[]) => v.every((x) => Number.isSafeInteger(x) && x >= 1);
  if (ok(hiddenSize, nHead) && json.head_dim === undefined && hiddenSize % nHead !== 0) {
    problems.push(`hidden_size (${hiddenSize}) is not divisible by num_attention_heads (${nHead}) and head_dim is not given`);
  }
  if (ok(nHead, nKvHead) && nHead % nKvHead !== 0) problems.push(`num_attention_heads (${nHead}) is not a multiple of num_key_value_heads (${nKvHead})`);
  if (ok(headDim) && headDim % 2 !== 0) problems.push(`head_dim (${headDim}) must be even (RoPE rotates pairs)`);
  if (ok(headDim) && headDim > FAMILY_MAX_HEAD_DIM)
    problems.push(`head_dim (${headDim}) is above ${FAMILY_MAX_HEAD_DIM}, the largest the attention kernels take`);
  let ropeScaling: RopeScaling = { type: 'none' };
  try {
    ropeScaling = parseRopeScaling(json.rope_scaling);
  } catch (error) {
    problems.push((error as Error).message);
  }
  if (problems.length) throw new Error(`config.json: ${problems.join('; ')}`);
  const name = typeof json._name_or_path === 'string' && json._name_or_path ? json._name_or_path : fallbackName;
  return {
    architecture,
    name,
    vocabSize,
    hiddenSize,
    intermediateSize,
    nLayer,
    nHead,
    nKvHead,
    headDim,
    ropeTheta,
    ropeScaling,
    rmsNormEps,
    tieWordEmbeddings: tie as boolean,
    maxPositionEmbeddings,
    qkvBias: architecture === 'Qwen2ForCausalLM' || (architecture === 'LlamaForCausalLM' && attentionBias === true),
    oBias: architecture === 'LlamaForCausalLM' && attentionBias === true,
    qkNorm: architecture === 'Qwen3ForCausalLM',
  };
}

/** `rope_scaling` as HF writes it (`rope_type`, or the older `type`); null or absent is none. */
export function parseRopeScaling(value: unknown): RopeScaling {
  if (value === undefined || value === null) return { type: 'none' };
  if (!isObject(value)) throw new Error(`rope_scaling ${JSON.stringify(value)} is not an object`);
  const kind = value.rope_type ?? value.type;
  const num = (key: string, fallback?: number): number => {
    const v = value[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new Error(`rope_scaling.${key} must be a positive number, got ${JSON.stringify(v)}`);
    return v;
  };
  if (kind === 'default') return { type: 'none' };
  if (kind === 'linear') return { type: 'linear', factor: num('factor') };
  if (kind === 'llama3') {
    const scaling = {
      type: 'llama3' as const,
      factor: num('factor'),
      lowFreqFactor: num('low_freq_factor', 1),
      highFreqFactor: num('high_freq_factor', 4),
      originalMaxPositionEmbeddings: num('original_max_position_embeddings', 8192),
    };
    if (scaling.highFreqFactor <= scaling.lowFreqFactor)
      throw new Error(`rope_scaling: high_freq_factor (${scaling.highFreqFactor}) must exceed low_freq_factor (${scaling.lowFreqFactor})`);
    return scaling;
  }
  throw new Error(`rope_scaling type ${JSON.stringify(kind)} is not supported (none, linear, llama3)`);
}

/**
 * RoPE's inverse frequencies, HS / 2 of them, with the config's scaling: what the CPU reference
 * rotates by and what the GPU uploads. Angle of pair d at position p: p · invFreq[d]. Llama 3's rule
 * (transformers' `_compute_llama3_parameters`): long wavelengths divided by the factor, short ones
 * kept, the band between interpolated.
 */
export function ropeInverseFrequencies(config: Pick<FamilyConfig, 'headDim' | 'ropeTheta' | 'ropeScaling'>): Float64Array {
  const { headDim: HS, ropeTheta, ropeScaling: s } = config;
  const out = new Float64Array(HS / 2);
  for (let d = 0; d < HS / 2; d++) {
    const base = 1 / ropeTheta ** ((2 * d) / HS);
    if (s.type === 'none') out[d] = base;
    else if (s.type === 'linear') out[d] = base / s.factor;
    else {
      const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
      const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
      const wavelen = (2 * Math.PI) / base;
      if (wavelen < highWavelen) out[d] = base;
      else if (wavelen > lowWavelen) out[d] = base / s.factor;
      else {
        const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
        out[d] = (1 - smooth) * (base / s.factor) + smooth * base;
      }
    }
  }
  return out;
}

export interface FamilyParameter {
  name: string;
  shape: readonly number[];
}

/** Per-layer tensor names after `model.layers.N.`. */
export function familyLayerName(layer: number, tensor: string): string {
  return `model.layers.${layer}.${tensor}`;
}

/** Every parameter of the model as the Hub names and shapes it (PyTorch Linear weights are (out, in)). */
export function familyParameters(config: FamilyConfig): FamilyParameter[] {
  const { vocabSize: V, hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS } = config;
  const out: FamilyParameter[] = [{ name: 'model.embed_tokens.weight', shape: [V, C] }];
  for (let l = 0; l < config.nLayer; l++) {
    const add = (tensor: string, shape: number[]) => out.push({ name: familyLayerName(l, tensor), shape });
    add('input_layernorm.weight', [C]);
    add('self_attn.q_proj.weight', [NH * HS, C]);
    if (config.qkvBias) add('self_attn.q_proj.bias', [NH * HS]);
    add('self_attn.k_proj.weight', [NKV * HS, C]);
    if (config.qkvBias) add('self_attn.k_proj.bias', [NKV * HS]);
    add('self_attn.v_proj.weight', [NKV * HS, C]);
    if (config.qkvBias) add('self_attn.v_proj.bias', [NKV * HS]);
    add('self_attn.o_proj.weight', [C, NH * HS]);
    if (config.oBias) add('self_attn.o_proj.bias', [C]);
    if (config.qkNorm) {
      add('self_attn.q_norm.weight', [HS]);
      add('self_attn.k_norm.weight', [HS]);
    }
    add('post_attention_layernorm.weight', [C]);
    add('mlp.gate_proj.weight', [FF, C]);
    add('mlp.up_proj.weight', [FF, C]);
    add('mlp.down_proj.weight', [C, FF]);
  }
  out.push({ name: 'model.norm.weight', shape: [C] });
  if (!config.tieWordEmbeddings) out.push({ name: 'lm_head.weight', shape: [V, C] });
  return out;
}

export function describeFamilyConfig(c: FamilyConfig): string {
  const kv = c.nKvHead === c.nHead ? '' : ` (${c.nKvHead} kv)`;
  return `${c.architecture} ${c.name}: V ${c.vocabSize}, C ${c.hiddenSize}, ${c.nLayer} layers, ${c.nHead} heads${kv} of ${c.headDim}, FF ${c.intermediateSize}, P ${c.maxPositionEmbeddings}`;
}
