// The GPT-2 parameter set, keyed by Hugging Face names without the `transformer.` prefix, in one
// canonical order (the state_dict order). Row-major float32, Conv1D layout: y = x·W + b, W (in, out).
// parameterLayout gives the flat buffer the GPU keeps all parameters (and gradients, AdamW m, v) in.

import { createRng } from '../util/prng';
import { type ModelConfig, validateConfig } from './config';

export interface ModelWeights {
  config: ModelConfig;
  tensors: Map<string, Float32Array>;
}

export interface ParameterShape {
  name: string;
  shape: number[];
}

/** Names of layer i's twelve tensors, in canonical order. */
export const LAYER_TENSORS = [
  'ln_1.weight',
  'ln_1.bias',
  'attn.c_attn.weight',
  'attn.c_attn.bias',
  'attn.c_proj.weight',
  'attn.c_proj.bias',
  'ln_2.weight',
  'ln_2.bias',
  'mlp.c_fc.weight',
  'mlp.c_fc.bias',
  'mlp.c_proj.weight',
  'mlp.c_proj.bias',
] as const;

export type LayerTensor = (typeof LAYER_TENSORS)[number];

export function layerName(layer: number, tensor: LayerTensor): string {
  return `h.${layer}.${tensor}`;
}

function layerShape(tensor: LayerTensor, C: number): number[] {
  switch (tensor) {
    case 'ln_1.weight':
    case 'ln_1.bias':
    case 'ln_2.weight':
    case 'ln_2.bias':
    case 'attn.c_proj.bias':
    case 'mlp.c_proj.bias':
      return [C];
    case 'attn.c_attn.weight':
      return [C, 3 * C];
    case 'attn.c_attn.bias':
      return [3 * C];
    case 'attn.c_proj.weight':
      return [C, C];
    case 'mlp.c_fc.weight':
      return [C, 4 * C];
    case 'mlp.c_fc.bias':
      return [4 * C];
    case 'mlp.c_proj.weight':
      return [4 * C, C];
  }
}

/** Every parameter with its shape, in canonical order: wte, wpe, h.0 … h.{NL-1}, ln_f. */
export function parameterShapes(config: ModelConfig): ParameterShape[] {
  const { vocabSize: V, nEmbd: C, nLayer, nPositions: P } = validateConfig(config);
  const out: ParameterShape[] = [
    { name: 'wte.weight', shape: [V, C] },
    { name: 'wpe.weight', shape: [P, C] },
  ];
  for (let i = 0; i < nLayer; i++) {
    for (const t of LAYER_TENSORS) out.push({ name: layerName(i, t), shape: layerShape(t, C) });
  }
  out.push({ name: 'ln_f.weight', shape: [C] }, { name: 'ln_f.bias', shape: [C] });
  return out;
}

export function shapeSize(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** Number of scalar parameters (no padding). */
export function parameterCount(config: ModelConfig): number {
  return parameterShapes(config).reduce((n, p) => n + shapeSize(p.shape), 0);
}

/**
 * Offsets in the flat buffer are multiples of 64 floats (256 bytes, WebGPU's default
 * minStorageBufferOffsetAlignment), so any tensor can also be bound on its own. Padding is zero.
 */
export const PARAMETER_ALIGNMENT = 64;

export interface LayoutEntry {
  name: string;
  shape: number[];
  offset: number; // in floats
  size: number; // in floats
}

export interface ParameterLayout {
  entries: LayoutEntry[];
  byName: Map<string, LayoutEntry>;
  totalSize: number; // in floats, padding included
}

export function parameterLayout(config: ModelConfig): ParameterLayout {
  const entries: LayoutEntry[] = [];
  let offset = 0;
  for (const { name, shape } of parameterShapes(config)) {
    const size = shapeSize(shape);
    entries.push({ name, shape, offset, size });
    offset += Math.ceil(size / PARAMETER_ALIGNMENT) * PARAMETER_ALIGNMENT;
  }
  return { entries, byName: new Map(entries.map((e) => [e.name, e])), totalSize: offset };
}

/** Throws naming the first missing, misshapen or unexpected tensor. */
export function validateWeights(weights: ModelWeights): ModelWeights {
  const expected = parameterShapes(weights.config);
  for (const { name, shape } of expected) {
    const t = weights.tensors.get(name);
    if (!t) throw new Error(`weights: missing tensor ${name}`);
    if (t.length !== shapeSize(shape)) throw new Error(`weights: ${name} has ${t.length} values, expected ${shapeSize(shape)} (${shape.join('×')})`);
  }
  const known = new Set(expected.map((p) => p.name));
  for (const name of weights.tensors.keys()) if (!known.has(name)) throw new Error(`weights: unexpected tensor ${name}`);
  return weights;
}

/** All parameters in one flat buffer laid out by parameterLayout. */
export function packParameters(weights: ModelWeights, layout = parameterLayout(weights.config)): Float32Array {
  validateWeights(weights);
  const flat = new Float32Array(layout.totalSize);
  for (const e of layout.entries) flat.set(weights.tensors.get(e.name)!, e.offset);
  return flat;
}

export function unpackParameters(config: ModelConfig, flat: Float32Array): ModelWeights {
  const layout = parameterLayout(config);
  if (flat.length !== layout.totalSize) throw new Error(`unpackParameters: buffer has ${flat.length} floats, layout needs ${layout.totalSize}`);
  const tensors = new Map<string, Float32Array>();
  for (const e of layout.entries) tensors.set(e.name, flat.slice(e.offset, e.offset + e.size));
  return { config: { ...config }, tensors };
}

/**
 * GPT-2 initialisation: weights and embeddings ~ N(0, 0.02²), the two residual projections
 * (attn.c_proj, mlp.c_proj) ~ N(0, (0.02/√(2·NL))²), biases 0, LayerNorm weight 1 and bias 0.
 * Tensors are drawn in canonical order from one stream, so a seed fixes every value.
 */
export function initWeights(config: ModelConfig, seed: number): ModelWeights {
  const rng = createRng(seed);
  const residualStd = 0.02 / Math.sqrt(2 * config.nLayer);
  const tensors = new Map<string, Float32Array>();
  for (const { name, shape } of parameterShapes(config)) {
    const t = new Float32Array(shapeSize(shape));
    if (/\.ln_\d\.weight$|^ln_f\.weight$/.test(name)) t.fill(1);
    else if (name.endsWith('.weight')) {
      const std = name.endsWith('c_proj.weight') ? residualStd : 0.02;
      for (let i = 0; i < t.length; i++) t[i] = std * rng.normal();
    }
    tensors.set(name, t);
  }
  return { config: { ...config }, tensors };
}
