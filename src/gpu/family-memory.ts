// What a family model needs on the GPU, from its config alone (docs/model.md, "Memory per size"): the
// weights as loadFamilyModel uploads them (the folder's format, each tensor padded to whole words), the
// activations a forward over N rows keeps (createFamilyForward), and the KV cache a decoder of N
// positions holds (family-generate.ts). The tests hold these formulas to the loader's and the forward's
// buffers; scoring's logits (a block of targets × V) and the attention mask come on top.

import { type FamilyConfig, familyParameters, type WeightDtype } from '../model/family/config';
import { BLOCK_ROWS_ALIGN } from './runtime/limits';

/** What one block of MLP rows may take ((rows, 2·FF) gate | up and (rows, FF) after SwiGLU): 32 MiB, and one binding. */
export const MLP_BLOCK_BYTES = 32 * 2 ** 20;

/** Rows of the MLP at a time for an intermediate size FF: a multiple of BLOCK_ROWS_ALIGN within `bindingBytes` and 32 MiB, all N when they fit. */
export function mlpRows(FF: number, N: number, bindingBytes: number): number {
  const bytes = Math.min(MLP_BLOCK_BYTES, bindingBytes);
  return Math.min(N, Math.floor(bytes / (2 * FF * 4) / BLOCK_ROWS_ALIGN) * BLOCK_ROWS_ALIGN);
}

const elementBytes = (dtype: WeightDtype) => (dtype === 'F32' ? 4 : 2);

/** Bytes of one uploaded tensor: whole 4-byte words, at least 16 (loadFamilyModel's uploadBytes). */
const uploaded = (bytes: number) => Math.max(16, Math.ceil(bytes / 4) * 4);

export interface FamilyMemory {
  /** Parameters (a tied head counted once). */
  parameters: number;
  /** Weight bytes on the GPU: every tensor in the folder's format, a tied head once. */
  weights: number;
  /** Bytes a forward over N rows keeps: the residual stream, a norm's output, qkv, the attention output and its log-sum-exp, one MLP block. */
  activations: number;
  /** Bytes of a decoder's KV cache for N positions: per layer and position one qkv row of f32. */
  kvCache: number;
}

/**
 * The memory of `config` stored as `dtype`, for N rows (a forward) or N positions (a decoder's cache).
 * `bindingBytes` (maxStorageBufferBindingSize) bounds the MLP block; the embedding's split over bindings
 * adds only word padding per block (none for even C).
 */
export function familyMemory(config: FamilyConfig, dtype: WeightDtype, N: number, bindingBytes = 2 ** 30): FamilyMemory {
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS, nLayer: L } = config;
  let parameters = 0;
  let weights = 0;
  for (const { shape } of familyParameters(config)) {
    const n = shape.reduce((a, b) => a * b, 1);
    parameters += n;
    weights += uploaded(n * elementBytes(dtype));
  }
  const W = (NH + 2 * NKV) * HS; // one qkv row
  const rowFloats = 2 * C + W + NH * HS + NH; // x, h, qkv, att, lse
  const B = mlpRows(FF, N, bindingBytes);
  return {
    parameters,
    weights,
    activations: 4 * (N * rowFloats + B * 3 * FF),
    kvCache: 4 * L * N * W,
  };
}
