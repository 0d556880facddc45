// For the family model's GPU test: tiny random model folders in each family's layout (tensors as a
// folder stores them, from a seeded stream) and a float64 forward of the family composed from the
// kernels' references, giving the log-probabilities of a packed tree batch's targets.

import { type FamilyConfig, type FolderTensor, type FolderTensorSource, ropeInverseFrequencies, type WeightDtype } from '../model/family/config';
import { createRng } from '../util/prng';
import { attentionGqaReference } from './kernels/attention/attention-gqa.reference';
import { familyTensorShapes } from './family-model';
import { embedReference } from './kernels/embed/embed.reference';
import { linearReference } from './kernels/linear/linear.reference';
import { rmsnormReference } from './kernels/rmsnorm/rmsnorm.reference';
import { ropeReference } from './kernels/rope/rope.reference';
import { swigluReference } from './kernels/swiglu/swiglu.reference';
import { decodeWeights, encodeWeights } from './kernels/weight-format/weight-format';

/**
 * Every tensor of `config`'s folder in `dtype`, in name order (as safetensors writes them): norms near
 * 1, biases near 0, matrices uniform with a 1/sqrt(fan-in) scale so activations stay of order 1.
 */
export function randomFamilyFolder(config: FamilyConfig, dtype: WeightDtype, seed: number): FolderTensor[] {
  const rng = createRng(seed);
  const shapes = [...familyTensorShapes(config)].sort(([a], [b]) => (a < b ? -1 : 1));
  return shapes.map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    const isBias = name.endsWith('.bias');
    const scale = isNorm ? 0.3 : isBias ? 0.3 : name.includes('embed_tokens') ? 1 : 2 / Math.sqrt(shape[shape.length - 1]);
    const values = Array.from({ length: n }, () => (isNorm ? 1 : 0) + (rng.next() * 2 - 1) * scale);
    return { name, dtype, shape, data: encodeWeights(dtype, values) };
  });
}

/** The folder's tensors as a stream, one at a time. */
export function folderSource(tensors: readonly FolderTensor[]): FolderTensorSource {
  return {
    totalBytes: tensors.reduce((n, t) => n + t.data.byteLength, 0),
    async *tensors() {
      for (const t of tensors) yield t;
    },
  };
}

export interface ReferenceBatch {
  tokens: ArrayLike<number>;
  positions: ArrayLike<number>;
  end: ArrayLike<number>;
  targets: readonly { predictor: number; token: number }[];
}

/** Float64 forward of the family over a packed batch: each target's log-probability. */
export function familyReferenceLogprobs(config: FamilyConfig, folder: readonly FolderTensor[], batch: ReferenceBatch): Float64Array {
  const w = new Map(folder.map((t) => [t.name, decodeWeights(t.dtype, t.data)]));
  const get = (name: string) => {
    const t = w.get(name);
    if (!t) throw new Error(`reference: no tensor ${name}`);
    return t;
  };
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS, vocabSize: V, rmsNormEps: eps } = config;
  const N = batch.tokens.length;
  const W = (NH + 2 * NKV) * HS;
  const invFreq = ropeInverseFrequencies(config);
  const x = embedReference(get('model.embed_tokens.weight'), batch.tokens, C);
  for (let l = 0; l < config.nLayer; l++) {
    const p = `model.layers.${l}.`;
    const a = `${p}self_attn.`;
    const h = rmsnormReference(x, get(`${p}input_layernorm.weight`), N, C, eps);
    const qkv = new Float64Array(N * W);
    let column = 0;
    for (const [proj, width] of [
      ['q_proj', NH * HS],
      ['k_proj', NKV * HS],
      ['v_proj', NKV * HS],
    ] as const) {
      const y = linearReference(h, get(`${a}${proj}.weight`), config.qkvBias ? get(`${a}${proj}.bias`) : null, N, C, width);
      for (let i = 0; i < N; i++) qkv.set(y.subarray(i * width, (i + 1) * width), i * W + column);
      column += width;
    }
    const norm = config.qkNorm ? { q: get(`${a}q_norm.weight`), k: get(`${a}k_norm.weight`), eps } : undefined;
    const rotated = ropeReference(qkv, batch.positions, invFreq, { N, NH, NKV, HS }, norm);
    const att = attentionGqaReference(rotated, batch.end, { NH, NKV, HS }).out;
    const o = linearReference(att, get(`${a}o_proj.weight`), null, N, NH * HS, C);
    for (let i = 0; i < N * C; i++) x[i] += o[i];
    const h2 = rmsnormReference(x, get(`${p}post_attention_layernorm.weight`), N, C, eps);
    const gate = linearReference(h2, get(`${p}mlp.gate_proj.weight`), null, N, C, FF);
    const up = linearReference(h2, get(`${p}mlp.up_proj.weight`), null, N, C, FF);
    const gateUp = new Float64Array(N * 2 * FF);
    for (let i = 0; i < N; i++) {
      gateUp.set(gate.subarray(i * FF, (i + 1) * FF), i * 2 * FF);
      gateUp.set(up.subarray(i * FF, (i + 1) * FF), i * 2 * FF + FF);
    }
    const down = linearReference(swigluReference(gateUp, N, FF), get(`${p}mlp.down_proj.weight`), null, N, FF, C);
    for (let i = 0; i < N * C; i++) x[i] += down[i];
  }
  const head = get(config.tieWordEmbeddings ? 'model.embed_tokens.weight' : 'lm_head.weight');
  return Float64Array.from(batch.targets, ({ predictor, token }) => {
    const row = rmsnormReference(x.subarray(predictor * C, (predictor + 1) * C), get('model.norm.weight'), 1, C, eps);
    const logits = linearReference(row, head, null, 1, C, V);
    const m = Math.max(...logits);
    const lse = m + Math.log(logits.reduce((s, v) => s + Math.exp(v - m), 0));
    return logits[token] - lse;
  });
}
