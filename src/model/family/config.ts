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
