// GPT-2 checkpoints laid out as Hugging Face publishes them, for tests and benchmarks (nothing is
// downloaded): `model.safetensors` of gpt2 has names without `transformer.`, `__metadata__` holding
// only {"format": "pt"} (no config), the causal-mask buffers `h.{i}.attn.bias` (1, 1, P, P) and no
// `lm_head.weight` (tied and left out); other uploads keep the prefix, a tied lm_head and
// `attn.masked_bias`, or store F16. The config must then come from the shapes (head size 64).

import { parameterShapes, type ModelWeights } from '../model/params';

export interface PublishedLayout {
  /** Tensor dtype; F16 values are the weights rounded to half precision (round to nearest even). */
  dtype?: 'F32' | 'F16';
  /** Names under `transformer.` (as GPT2LMHeadModel's state_dict), default false (as gpt2's file). */
  prefix?: boolean;
  /** Also store the tied `lm_head.weight` (a copy of wte), default false. */
  lmHead?: boolean;
  /** Also store the `attn.masked_bias` scalars of older uploads, default false. */
  maskedBias?: boolean;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** IEEE half of a float32, rounded to nearest even; overflow to ±Infinity. */
export function floatToHalf(value: number): number {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = mant >>> shift;
    const rest = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (half + (rest > mid || (rest === mid && half & 1) ? 1 : 0));
  }
  const half = (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // Rounding may carry into the exponent, which is the right answer (up to Infinity).
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && half & 1) ? 1 : 0));
}

interface Tensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** The file's bytes. Tensors are written in the published order: sorted by name, as safetensors does. */
export function publishedGpt2Checkpoint(weights: ModelWeights, layout: PublishedLayout = {}): Uint8Array {
  const { nLayer, nPositions: P } = weights.config;
  const dtype = layout.dtype ?? 'F32';
  const name = (n: string) => (layout.prefix ? `transformer.${n}` : n);
  const tensors: Tensor[] = parameterShapes(weights.config).map(({ name: n, shape }) => ({ name: name(n), shape, data: weights.tensors.get(n)! }));
  const mask = new Float32Array(P * P);
  for (let i = 0; i < P; i++) for (let j = 0; j <= i; j++) mask[i * P + j] = 1;
  for (let l = 0; l < nLayer; l++) {
    tensors.push({ name: name(`h.${l}.attn.bias`), shape: [1, 1, P, P], data: mask });
    if (layout.maskedBias) tensors.push({ name: name(`h.${l}.attn.masked_bias`), shape: [], data: Float32Array.of(-1e4) });
  }
  if (layout.lmHead) tensors.push({ name: 'lm_head.weight', shape: parameterShapes(weights.config)[0].shape, data: weights.tensors.get('wte.weight')! });
  tensors.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

  const width = dtype === 'F16' ? 2 : 4;
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype, shape: t.shape, data_offsets: [offset, offset + width * t.data.length] };
    offset += width * t.data.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - ((json.length + 8) % 8)) % 8);
  const out = new Uint8Array(8 + json.length + offset);
  const view = new DataView(out.buffer);
  view.setUint32(0, json.length, true);
  out.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const t of tensors) {
    if (dtype === 'F16') for (let i = 0; i < t.data.length; i++, at += 2) view.setUint16(at, floatToHalf(t.data[i]), true);
    else for (let i = 0; i < t.data.length; i++, at += 4) view.setFloat32(at, t.data[i], true);
  }
  return out;
}
