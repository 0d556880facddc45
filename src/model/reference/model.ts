// Float64 GPT-2 forward and backward over one packed input (tokens, positions, end[]): the oracle the
// GPU engine is checked against, logits and every parameter gradient. Pre-LN blocks, tanh GELU,
// output head tied to wte. Composed only of the kernels' float64 references (src/gpu/kernels/<name>/<name>.reference.ts).

import { type ModelConfig, validateConfig } from '../config';
import { type LayerTensor, layerName, parameterShapes } from '../params';
import { type LayernormResult, layernormBackwardRef, layernormRef } from '../../gpu/kernels/layernorm/layernorm.reference';
import { attentionBackwardRef, attentionRef } from '../../gpu/kernels/attention/attention.reference';
import { embeddingBackwardRef, embeddingRef } from '../../gpu/kernels/embedding/embedding.reference';
import { geluRef } from '../../gpu/kernels/gelu/gelu.reference';
import { logsoftmaxGatherBackwardRef, logsoftmaxGatherRef } from '../../gpu/kernels/logsoftmax/logsoftmax.reference';
import { matmulBackwardRef } from '../../gpu/kernels/matmul-backward/matmul-backward.reference';
import { matmulRef } from '../../gpu/kernels/matmul/matmul.reference';

/** ModelWeights qualifies; float64 tensors work too (finite differences need them). */
export interface ReferenceWeights {
  config: ModelConfig;
  tensors: ReadonlyMap<string, ArrayLike<number>>;
}

/** One packed input of N indices (docs/methods.md): query i sees key k iff k <= i < end[k]. */
export interface ModelInput {
  tokens: ArrayLike<number>; // (N) token values in [0, V)
  positions: ArrayLike<number>; // (N) position ids in [0, P)
  end: ArrayLike<number>; // (N) visibility encoding
}

/** A scored target: the token at some index, predicted by the logits row of index `predictor`. */
export interface Target {
  predictor: number;
  token: number;
}

interface LayerCache {
  xIn: Float64Array; // (N, C) residual stream entering the block
  ln1: LayernormResult;
  qkv: Float64Array; // (N, 3C)
  att: Float64Array; // (N, C) attention output before c_proj
  xMid: Float64Array; // (N, C) residual after the attention half
  ln2: LayernormResult;
  fcPre: Float64Array; // (N, 4C) c_fc output before GELU
  fcAct: Float64Array; // (N, 4C) after GELU
}

export interface ForwardCache {
  input: ModelInput;
  N: number;
  layers: LayerCache[];
  xFinal: Float64Array; // (N, C) residual stream entering ln_f
  lnf: LayernormResult;
  wteT: Float64Array; // (C, V) the tied head as a Conv1D weight
}

export interface ForwardResult {
  logits: Float64Array; // (N, V)
  cache: ForwardCache;
}

function tensor(weights: ReferenceWeights, name: string): ArrayLike<number> {
  const t = weights.tensors.get(name);
  if (!t) throw new Error(`reference model: missing tensor ${name}`);
  return t;
}

function checkInput(config: ModelConfig, input: ModelInput): number {
  const N = input.tokens.length;
  if (N < 1) throw new Error('reference model: empty input');
  if (input.positions.length !== N || input.end.length !== N) {
    throw new Error(`reference model: ${N} tokens, ${input.positions.length} positions, ${input.end.length} end entries (must be equal)`);
  }
  for (let i = 0; i < N; i++) {
    const t = input.tokens[i];
    const p = input.positions[i];
    const e = input.end[i];
    if (!Number.isInteger(t) || t < 0 || t >= config.vocabSize) throw new Error(`reference model: token ${t} at index ${i} outside [0, ${config.vocabSize})`);
    if (!Number.isInteger(p) || p < 0 || p >= config.nPositions)
      throw new Error(`reference model: position ${p} at index ${i} outside [0, ${config.nPositions})`);
    if (!Number.isInteger(e) || e < 0 || e > N) throw new Error(`reference model: end[${i}] = ${e} outside [0, ${N}]`);
  }
  return N;
}

function transpose(a: ArrayLike<number>, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = a[r * cols + c];
  return out;
}

function addInto(a: Float64Array, b: ArrayLike<number>): Float64Array {
  for (let i = 0; i < a.length; i++) a[i] += b[i];
  return a;
}

export function referenceForward(weights: ReferenceWeights, input: ModelInput): ForwardResult {
  const config = validateConfig(weights.config);
  const { vocabSize: V, nEmbd: C, nLayer, nHead } = config;
  const N = checkInput(config, input);
  const w = (i: number, t: LayerTensor) => tensor(weights, layerName(i, t));

  let x = embeddingRef(input.tokens, input.positions, tensor(weights, 'wte.weight'), tensor(weights, 'wpe.weight'), C); // (N, C)
  const layers: LayerCache[] = [];
  for (let l = 0; l < nLayer; l++) {
    const xIn = x;
    const ln1 = layernormRef(xIn, w(l, 'ln_1.weight'), w(l, 'ln_1.bias'), N, C);
    const qkv = matmulRef(ln1.out, w(l, 'attn.c_attn.weight'), w(l, 'attn.c_attn.bias'), N, C, 3 * C); // (N, 3C)
    const att = attentionRef(qkv, input.end, N, C, nHead).out; // (N, C)
    const xMid = addInto(matmulRef(att, w(l, 'attn.c_proj.weight'), w(l, 'attn.c_proj.bias'), N, C, C), xIn);
    const ln2 = layernormRef(xMid, w(l, 'ln_2.weight'), w(l, 'ln_2.bias'), N, C);
    const fcPre = matmulRef(ln2.out, w(l, 'mlp.c_fc.weight'), w(l, 'mlp.c_fc.bias'), N, C, 4 * C); // (N, 4C)
    const fcAct = geluRef(fcPre);
    x = addInto(matmulRef(fcAct, w(l, 'mlp.c_proj.weight'), w(l, 'mlp.c_proj.bias'), N, 4 * C, C), xMid);
    layers.push({ xIn, ln1, qkv, att, xMid, ln2, fcPre, fcAct });
  }
  const lnf = layernormRef(x, tensor(weights, 'ln_f.weight'), tensor(weights, 'ln_f.bias'), N, C);
  const wteT = transpose(tensor(weights, 'wte.weight'), V, C); // (C, V)
  const logits = matmulRef(lnf.out, wteT, null, N, C, V); // (N, V)
  return { logits, cache: { input, N, layers, xFinal: x, lnf, wteT } };
}

/** Gradients of Σ dLogits ⊙ logits with respect to every parameter, keyed by canonical name. */
export function referenceBackward(weights: ReferenceWeights, cache: ForwardCache, dLogits: ArrayLike<number>): Map<string, Float64Array> {
  const { vocabSize: V, nEmbd: C, nLayer, nHead, nPositions: P } = weights.config;
  const { N, input, layers, lnf } = cache;
  if (dLogits.length !== N * V) throw new Error(`referenceBackward: dLogits has ${dLogits.length} values, expected N·V = ${N * V}`);
  const grads = new Map<string, Float64Array>();
  const w = (i: number, t: LayerTensor) => tensor(weights, layerName(i, t));
  const put = (i: number, t: LayerTensor, g: Float64Array) => grads.set(layerName(i, t), g);

  const head = matmulBackwardRef(lnf.out, cache.wteT, dLogits, N, C, V);
  const dwteHead = transpose(head.dw, C, V); // (V, C)
  const dlnf = layernormBackwardRef(cache.xFinal, tensor(weights, 'ln_f.weight'), lnf.mean, lnf.rstd, head.dx, N, C);
  grads.set('ln_f.weight', dlnf.dweight);
  grads.set('ln_f.bias', dlnf.dbias);

  let dx = dlnf.dx; // (N, C) gradient of the residual stream
  for (let l = nLayer - 1; l >= 0; l--) {
    const c = layers[l];
    // x = xMid + c_proj(gelu(c_fc(ln_2(xMid))))
    const proj = matmulBackwardRef(c.fcAct, w(l, 'mlp.c_proj.weight'), dx, N, 4 * C, C);
    const fc = matmulBackwardRef(c.ln2.out, w(l, 'mlp.c_fc.weight'), proj.dx, N, C, 4 * C, c.fcPre);
    const ln2 = layernormBackwardRef(c.xMid, w(l, 'ln_2.weight'), c.ln2.mean, c.ln2.rstd, fc.dx, N, C);
    const dxMid = addInto(ln2.dx, dx);
    // xMid = xIn + c_proj(attention(c_attn(ln_1(xIn))))
    const attProj = matmulBackwardRef(c.att, w(l, 'attn.c_proj.weight'), dxMid, N, C, C);
    const dqkv = attentionBackwardRef(c.qkv, input.end, attProj.dx, N, C, nHead);
    const attn = matmulBackwardRef(c.ln1.out, w(l, 'attn.c_attn.weight'), dqkv, N, C, 3 * C);
    const ln1 = layernormBackwardRef(c.xIn, w(l, 'ln_1.weight'), c.ln1.mean, c.ln1.rstd, attn.dx, N, C);
    dx = addInto(ln1.dx, dxMid);

    put(l, 'ln_1.weight', ln1.dweight);
    put(l, 'ln_1.bias', ln1.dbias);
    put(l, 'attn.c_attn.weight', attn.dw);
    put(l, 'attn.c_attn.bias', attn.dbias);
    put(l, 'attn.c_proj.weight', attProj.dw);
    put(l, 'attn.c_proj.bias', attProj.dbias);
    put(l, 'ln_2.weight', ln2.dweight);
    put(l, 'ln_2.bias', ln2.dbias);
    put(l, 'mlp.c_fc.weight', fc.dw);
    put(l, 'mlp.c_fc.bias', fc.dbias);
    put(l, 'mlp.c_proj.weight', proj.dw);
    put(l, 'mlp.c_proj.bias', proj.dbias);
  }

  const emb = embeddingBackwardRef(input.tokens, input.positions, dx, V, P, C);
  grads.set('wte.weight', addInto(emb.dwte, dwteHead));
  grads.set('wpe.weight', emb.dwpe);

  // Same keys and order as parameterShapes, so callers can iterate either.
  const ordered = new Map<string, Float64Array>();
  for (const { name } of parameterShapes(weights.config)) ordered.set(name, grads.get(name)!);
  return ordered;
}

function checkTargets(config: ModelConfig, N: number, targets: readonly Target[]): { rows: number[]; tokens: number[] } {
  const rows: number[] = [];
  const tokens: number[] = [];
  targets.forEach(({ predictor, token }, j) => {
    if (!Number.isInteger(predictor) || predictor < 0 || predictor >= N) throw new Error(`target ${j}: predictor ${predictor} outside [0, ${N})`);
    if (!Number.isInteger(token) || token < 0 || token >= config.vocabSize) throw new Error(`target ${j}: token ${token} outside [0, ${config.vocabSize})`);
    rows.push(predictor);
    tokens.push(token);
  });
  return { rows, tokens };
}

/** log π(token | prefix) for each target, in target order. */
export function referenceLogprobs(weights: ReferenceWeights, input: ModelInput, targets: readonly Target[]): Float64Array {
  const { logits, cache } = referenceForward(weights, input);
  const { rows, tokens } = checkTargets(weights.config, cache.N, targets);
  return logsoftmaxGatherRef(logits, weights.config.vocabSize, rows, tokens);
}

export interface SftResult {
  loss: number; // mean negative log-likelihood over targets
  logprobs: Float64Array; // per target
  grads: Map<string, Float64Array>; // d loss / d parameter
}

/**
 * SFT objective (docs/objectives.md): mean NLL of the targets, with gradients. With no targets there is nothing
 * to learn: loss 0 and zero gradients (a batch whose targets were all dropped by the method).
 */
export function sftLossAndGrads(weights: ReferenceWeights, input: ModelInput, targets: readonly Target[]): SftResult {
  const V = weights.config.vocabSize;
  const { logits, cache } = referenceForward(weights, input);
  const { rows, tokens } = checkTargets(weights.config, cache.N, targets);
  const logprobs = logsoftmaxGatherRef(logits, V, rows, tokens);
  const T = targets.length;
  const loss = T === 0 ? 0 : -logprobs.reduce((a, b) => a + b, 0) / T;
  const dLogprob = new Float64Array(T).fill(T === 0 ? 0 : -1 / T);
  const dLogits = logsoftmaxGatherBackwardRef(logits, V, cache.N, rows, tokens, dLogprob);
  return { loss, logprobs, grads: referenceBackward(weights, cache, dLogits) };
}
