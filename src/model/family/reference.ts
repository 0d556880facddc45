// Float64 forward of the Llama / Qwen2 / Qwen3 family over one packed input (tokens, positions, end[]),
// the same input and targets as the GPT-2 reference (../reference/model.ts): the oracle the family's
// WGSL forward is checked against. RMSNorm, per-head q/k RMSNorm (Qwen3), RoPE in the `rotate_half`
// convention at each row's own position, grouped-query attention under the packed tree mask, SwiGLU.

import type { ModelInput, Target } from '../reference/model';
import { logsoftmaxGatherRef } from '../../gpu/kernels/logsoftmax/logsoftmax.reference';
import { visible } from '../../gpu/kernels/attention/attention.reference';
import { linearRef } from '../../gpu/kernels/linear/linear.reference';
import { rmsnormRef } from '../../gpu/kernels/rmsnorm/rmsnorm.reference';
import { type FamilyConfig, familyLayerName, familyParameters, ropeInverseFrequencies } from './config';

export type { ModelInput, Target } from '../reference/model';

/** Weights by their Hub names, as float values (decodeFolderTensor turns a FolderTensor into one). */
export interface FamilyWeights {
  config: FamilyConfig;
  tensors: ReadonlyMap<string, ArrayLike<number>>;
}

type Vec = ArrayLike<number>;

function tensor(weights: FamilyWeights, name: string): Vec {
  const t = weights.tensors.get(name);
  if (!t) throw new Error(`family reference: missing tensor ${name}`);
  return t;
}

/** Every tensor the config names, present with its element count; one line listing what is wrong. */
export function checkFamilyWeights(weights: FamilyWeights): void {
  const problems: string[] = [];
  for (const { name, shape } of familyParameters(weights.config)) {
    const t = weights.tensors.get(name);
    const want = shape.reduce((a, b) => a * b, 1);
    if (!t) problems.push(`missing ${name}`);
    else if (t.length !== want) problems.push(`${name} has ${t.length} values, ${JSON.stringify(shape)} needs ${want}`);
  }
  if (problems.length) throw new Error(`family reference: ${problems.join('; ')}`);
}

/**
 * RoPE in place on x (N, heads·HS), `rotate_half` convention: pair (d, d + HS/2) of each head turns by
 * the angle positions[i] · invFreq[d] (out = x·cos + rotate_half(x)·sin, rotate_half(x) = [−x₂, x₁]).
 */
export function applyRopeRef(x: Float64Array, positions: Vec, invFreq: Vec, N: number, heads: number, HS: number): Float64Array {
  const half = HS / 2;
  for (let i = 0; i < N; i++) {
    for (let d = 0; d < half; d++) {
      const angle = positions[i] * invFreq[d];
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      for (let h = 0; h < heads; h++) {
        const at = i * heads * HS + h * HS + d;
        const x1 = x[at];
        const x2 = x[at + half];
        x[at] = x1 * cos - x2 * sin;
        x[at + half] = x2 * cos + x1 * sin;
      }
    }
  }
  return x;
}

/**
 * Grouped-query attention under the packed mask (query i sees key k iff k <= i < end[k]): q (N, NH·HS),
 * k and v (N, NKV·HS); query head h reads kv head ⌊h / (NH/NKV)⌋ (transformers' repeat_kv). Out (N, NH·HS).
 */
export function gqaAttentionRef(q: Vec, k: Vec, v: Vec, end: Vec, N: number, NH: number, NKV: number, HS: number): Float64Array {
  const out = new Float64Array(N * NH * HS);
  const group = NH / NKV;
  const scale = 1 / Math.sqrt(HS);
  const s = new Float64Array(N);
  for (let h = 0; h < NH; h++) {
    const kvh = Math.floor(h / group);
    for (let i = 0; i < N; i++) {
      let max = -Infinity;
      for (let j = 0; j <= i; j++) {
        if (!visible(end, i, j)) continue;
        let dot = 0;
        for (let d = 0; d < HS; d++) dot += q[(i * NH + h) * HS + d] * k[(j * NKV + kvh) * HS + d];
        s[j] = dot * scale;
        if (s[j] > max) max = s[j];
      }
      if (max === -Infinity) continue; // a row that sees nothing outputs zeros
      let sum = 0;
      for (let j = 0; j <= i; j++) if (visible(end, i, j)) sum += Math.exp(s[j] - max);
      for (let j = 0; j <= i; j++) {
        if (!visible(end, i, j)) continue;
        const p = Math.exp(s[j] - max) / sum;
        for (let d = 0; d < HS; d++) out[(i * NH + h) * HS + d] += p * v[(j * NKV + kvh) * HS + d];
      }
    }
  }
  return out;
}

function checkInput(config: FamilyConfig, input: ModelInput): number {
  const N = input.tokens.length;
  if (N < 1) throw new Error('family reference: empty input');
  if (input.positions.length !== N || input.end.length !== N) {
    throw new Error(`family reference: ${N} tokens, ${input.positions.length} positions, ${input.end.length} end entries (must be equal)`);
  }
  for (let i = 0; i < N; i++) {
    const [t, p, e] = [input.tokens[i], input.positions[i], input.end[i]];
    if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) throw new Error(`family reference: token ${t} at index ${i} outside [0, ${config.vocabSize})`);
    if (!Number.isInteger(p) || p < 0 || p >= config.maxPositionEmbeddings) {
      throw new Error(`family reference: position ${p} at index ${i} outside [0, ${config.maxPositionEmbeddings})`);
    }
    if (!Number.isInteger(e) || e < 0 || e > N) throw new Error(`family reference: end[${i}] = ${e} outside [0, ${N}]`);
  }
  return N;
}

/** The residual stream after the final RMSNorm, (N, C): what the head multiplies. */
export function familyHidden(weights: FamilyWeights, input: ModelInput): Float64Array {
  const { config } = weights;
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS, rmsNormEps: eps } = config;
  const N = checkInput(config, input);
  checkFamilyWeights(weights);
  const w = (l: number, t: string) => tensor(weights, familyLayerName(l, t));
  const bias = (l: number, t: string) => (config.qkvBias ? w(l, t) : null);
  const invFreq = ropeInverseFrequencies(config);

  const embed = tensor(weights, 'model.embed_tokens.weight');
  const x = new Float64Array(N * C); // (N, C)
  for (let i = 0; i < N; i++) for (let c = 0; c < C; c++) x[i * C + c] = embed[input.tokens[i] * C + c];

  for (let l = 0; l < config.nLayer; l++) {
    const h = rmsnormRef(x, w(l, 'input_layernorm.weight'), N, C, eps);
    let q = linearRef(h, w(l, 'self_attn.q_proj.weight'), bias(l, 'self_attn.q_proj.bias'), N, C, NH * HS); // (N, NH·HS)
    let k = linearRef(h, w(l, 'self_attn.k_proj.weight'), bias(l, 'self_attn.k_proj.bias'), N, C, NKV * HS); // (N, NKV·HS)
    const v = linearRef(h, w(l, 'self_attn.v_proj.weight'), bias(l, 'self_attn.v_proj.bias'), N, C, NKV * HS);
    if (config.qkNorm) {
      q = rmsnormRef(q, w(l, 'self_attn.q_norm.weight'), N * NH, HS, eps);
      k = rmsnormRef(k, w(l, 'self_attn.k_norm.weight'), N * NKV, HS, eps);
    }
    applyRopeRef(q, input.positions, invFreq, N, NH, HS);
    applyRopeRef(k, input.positions, invFreq, N, NKV, HS);
    const att = gqaAttentionRef(q, k, v, input.end, N, NH, NKV, HS); // (N, NH·HS)
    const o = linearRef(att, w(l, 'self_attn.o_proj.weight'), config.oBias ? w(l, 'self_attn.o_proj.bias') : null, N, NH * HS, C);
    for (let j = 0; j < N * C; j++) x[j] += o[j];

    const h2 = rmsnormRef(x, w(l, 'post_attention_layernorm.weight'), N, C, eps);
    const gate = linearRef(h2, w(l, 'mlp.gate_proj.weight'), null, N, C, FF); // (N, FF)
    const up = linearRef(h2, w(l, 'mlp.up_proj.weight'), null, N, C, FF);
    for (let j = 0; j < N * FF; j++) gate[j] = (gate[j] / (1 + Math.exp(-gate[j]))) * up[j]; // SwiGLU: silu(gate) · up
    const down = linearRef(gate, w(l, 'mlp.down_proj.weight'), null, N, FF, C);
    for (let j = 0; j < N * C; j++) x[j] += down[j];
  }
  return rmsnormRef(x, tensor(weights, 'model.norm.weight'), N, C, eps);
}

/** The output head (V, C): lm_head, or the embedding when tied. */
function headOf(weights: FamilyWeights): Vec {
  return tensor(weights, weights.config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
}

/** Logits of the given rows (rows.length, V), every row when none are given. */
export function familyLogits(weights: FamilyWeights, input: ModelInput, rows?: readonly number[]): Float64Array {
  const { hiddenSize: C, vocabSize: V } = weights.config;
  const hidden = familyHidden(weights, input);
  const pick = rows ?? Array.from({ length: input.tokens.length }, (_, i) => i);
  const selected = new Float64Array(pick.length * C);
  pick.forEach((r, j) => {
    selected.set(hidden.subarray(r * C, (r + 1) * C), j * C);
  });
  return linearRef(selected, headOf(weights), null, pick.length, C, V);
}

/** log π(token | prefix) for each target, in target order (the GPT-2 reference's referenceLogprobs). */
export function familyReferenceLogprobs(weights: FamilyWeights, input: ModelInput, targets: readonly Target[]): Float64Array {
  const N = input.tokens.length;
  const rows: number[] = [];
  const tokens: number[] = [];
  targets.forEach(({ predictor, token }, j) => {
    if (!Number.isInteger(predictor) || predictor < 0 || predictor >= N) throw new Error(`target ${j}: predictor ${predictor} outside [0, ${N})`);
    if (!Number.isInteger(token) || token < 0 || token >= weights.config.vocabSize)
      throw new Error(`target ${j}: token ${token} outside [0, ${weights.config.vocabSize})`);
    rows.push(predictor);
    tokens.push(token);
  });
  const unique = [...new Set(rows)];
  const slot = new Map(unique.map((r, j) => [r, j]));
  const logits = familyLogits(weights, input, unique);
  return logsoftmaxGatherRef(
    logits,
    weights.config.vocabSize,
    rows.map((r) => slot.get(r)!),
    tokens,
  );
}
