// The GPT-2 model on the GPU (docs/model.md): parameters and their gradients in one flat buffer each
// (laid out by parameterLayout, every tensor 256-byte aligned so it binds on its own), and the
// launches of a forward and a backward pass over one packed batch (tokens, positions, end[]), or
// of a forward alone that keeps two layers' activations (scoring, SDCC's teacher).

import type { ModelConfig } from '../model/config';
import { headSize } from '../model/config';
import { packParameters, parameterLayout, unpackParameters, type ModelWeights, type ParameterLayout } from '../model/params';
import { createStorage, readFloat32, uploadStorage } from './buffers';
import type { Gpu } from './device';
import { encodeLaunches, releaseLaunches, type Launch } from './kernel';
import { createAdd } from './add';
import { attentionConfig, createAttentionMask, encodeAttentionBackward, encodeAttentionForward, type AttentionMask } from './attention';
import { createEmbedding, createEmbeddingBackward, uploadEmbeddingIndex, type EmbeddingIndex } from './embedding';
import { createHead } from './head';
import { bindingLimit, GpuLimitError, rowBlocks } from './limits';
import { createLayernorm, createLayernormBackward } from './layernorm';
import { createMatmul } from './matmul';
import { createMatmulBackward } from './matmul_backward';

export interface GpuModel {
  gpu: Gpu;
  config: ModelConfig;
  layout: ParameterLayout;
  /** All parameters, flat (layout.totalSize floats). */
  weights: GPUBuffer;
  /** Their gradients, same layout (allocated on first use). */
  readonly grads: GPUBuffer;
  /** One tensor of `weights` (or of `grads`) as a binding. */
  tensor(name: string): GPUBufferBinding;
  grad(name: string): GPUBufferBinding;
  setWeights(weights: ModelWeights): void;
  readWeights(): Promise<ModelWeights>;
  readGrads(): Promise<Map<string, Float32Array>>;
  destroy(): void;
}

export const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/**
 * Checks a config against the adapter's limits before anything is allocated: the parameters live
 * in one buffer (maxBufferSize), every tensor and activation binds on its own (the token embedding
 * in blocks when it must), and a batch's logits (logitRows, V) bind whole (scoring computes the
 * logits of a block of its targets at a time: fewer rows than the batch).
 */
export function checkModelFits(config: ModelConfig, device: GPUDevice, rows: number, logitRows = rows): void {
  const { nEmbd: C, vocabSize: V } = config;
  const parameters = parameterLayout(config).totalSize * 4;
  if (parameters > device.limits.maxBufferSize) {
    throw new GpuLimitError(
      `model does not fit the adapter: its parameters need one ${mib(parameters)} buffer, the adapter allows at most ${mib(device.limits.maxBufferSize)} (maxBufferSize)`,
    );
  }
  const limit = bindingLimit(device);
  rowBlocks(V, C, limit, 'model does not fit the adapter: the token embedding');
  const largest = Math.max(rows * 4 * C, logitRows * V) * 4;
  if (largest > limit) {
    throw new GpuLimitError(
      `model does not fit the adapter: a ${rows}-row batch needs a ${mib(largest)} binding (${logitRows * V >= rows * 4 * C ? 'its logits' : 'its MLP activations'}), ` +
        `the adapter binds at most ${mib(limit)} (maxStorageBufferBindingSize)`,
    );
  }
  if (headSize(config) > 64 || headSize(config) % 4 !== 0) {
    throw new Error(`head size ${headSize(config)} is not supported: the attention kernels take a multiple of 4, at most 64`);
  }
}

export function createGpuModel(gpu: Gpu, weights: ModelWeights): GpuModel {
  const { device } = gpu;
  const config = weights.config;
  const layout = parameterLayout(config);
  checkModelFits(config, device, 1);
  const flat = createStorage(device, 'GpuModel.weights', layout.totalSize * 4);
  // Gradients are allocated on first use: scoring never needs them (for GPT-2 124M, 498 MB).
  let grads: GPUBuffer | undefined;
  const gradBuffer = () => {
    if (!grads && layout.totalSize * 4 > bindingLimit(device)) {
      // AdamW binds the parameters and gradients whole, and the backward the token embedding.
      throw new GpuLimitError(
        `model does not fit the adapter for training: its ${mib(layout.totalSize * 4)} of parameters must bind whole, the adapter binds at most ${mib(bindingLimit(device))} (maxStorageBufferBindingSize)`,
      );
    }
    return (grads ??= createStorage(device, 'GpuModel.grads', layout.totalSize * 4));
  };
  const slice = (buffer: GPUBuffer, name: string): GPUBufferBinding => {
    const entry = layout.byName.get(name);
    if (!entry) throw new Error(`GpuModel: no tensor ${name}`);
    return { buffer, offset: entry.offset * 4, size: entry.size * 4 };
  };
  const model: GpuModel = {
    gpu,
    config,
    layout,
    weights: flat,
    get grads() {
      return gradBuffer();
    },
    tensor: (name) => slice(flat, name),
    grad: (name) => slice(gradBuffer(), name),
    setWeights(w) {
      const packed = packParameters(w);
      device.queue.writeBuffer(flat, 0, packed.buffer, packed.byteOffset, packed.byteLength);
    },
    async readWeights() {
      return unpackParameters(config, await readFloat32(device, flat, layout.totalSize));
    },
    async readGrads() {
      return unpackParameters(config, await readFloat32(device, gradBuffer(), layout.totalSize)).tensors;
    },
    destroy() {
      flat.destroy();
      grads?.destroy();
    },
  };
  model.setWeights(weights);
  return model;
}

/**
 * One transformer block's buffers over `rows` rows. The forward gives every layer its own (the
 * backward reads them); the decoder shares one set across layers and aliases several of them.
 */
export interface BlockBuffers {
  x: GPUBuffer; // (rows, C): the block's input
  ln1: GPUBuffer; // (rows, C)
  ln1Mean: GPUBuffer; // (rows)
  ln1Rstd: GPUBuffer; // (rows)
  qkv: GPUBuffer; // (rows, 3C)
  att: GPUBuffer; // (rows, C): attention's output
  attProj: GPUBuffer; // (rows, C)
  x1: GPUBuffer; // (rows, C): residual after attention
  ln2: GPUBuffer; // (rows, C)
  ln2Mean: GPUBuffer; // (rows)
  ln2Rstd: GPUBuffer; // (rows)
  /** (rows, 4C): the MLP before GELU, kept for the backward (none when decoding). */
  fcPre?: GPUBuffer;
  fc: GPUBuffer; // (rows, 4C)
  mlpProj: GPUBuffer; // (rows, C)
  out: GPUBuffer; // (rows, C): residual after the MLP = the next block's input
}

/**
 * The launches of block `l` over `rows` rows, around its attention (which the caller dispatches:
 * the flash kernel over a mask, or attention_decode over a KV cache): `toQkv` (ln_1, c_attn) writes
 * qkv, `fromAttention` (c_proj, residual, ln_2, MLP with GELU, residual) reads att and writes out.
 */
export function createBlockLaunches(model: GpuModel, l: number, rows: number, b: BlockBuffers): { toQkv: Launch[]; fromAttention: Launch[] } {
  const { device } = model.gpu;
  const C = model.config.nEmbd;
  const t = model.tensor;
  const h = `h.${l}.`;
  return {
    toQkv: [
      createLayernorm(device, { N: rows, C }, { x: b.x, weight: t(`${h}ln_1.weight`), bias: t(`${h}ln_1.bias`), out: b.ln1, mean: b.ln1Mean, rstd: b.ln1Rstd }),
      createMatmul(device, { M: rows, K: C, N: 3 * C }, { x: b.ln1, w: t(`${h}attn.c_attn.weight`), bias: t(`${h}attn.c_attn.bias`), y: b.qkv }),
    ],
    fromAttention: [
      createMatmul(device, { M: rows, K: C, N: C }, { x: b.att, w: t(`${h}attn.c_proj.weight`), bias: t(`${h}attn.c_proj.bias`), y: b.attProj }),
      createAdd(device, rows * C, { a: b.x, b: b.attProj, out: b.x1 }),
      createLayernorm(device, { N: rows, C }, { x: b.x1, weight: t(`${h}ln_2.weight`), bias: t(`${h}ln_2.bias`), out: b.ln2, mean: b.ln2Mean, rstd: b.ln2Rstd }),
      createMatmul(device, { M: rows, K: C, N: 4 * C }, { x: b.ln2, w: t(`${h}mlp.c_fc.weight`), bias: t(`${h}mlp.c_fc.bias`), y: b.fc, pre: b.fcPre }, { gelu: true }),
      createMatmul(device, { M: rows, K: 4 * C, N: C }, { x: b.fc, w: t(`${h}mlp.c_proj.weight`), bias: t(`${h}mlp.c_proj.bias`), y: b.mlpProj }),
      createAdd(device, rows * C, { a: b.x1, b: b.mlpProj, out: b.out }),
    ],
  };
}

/** A batch as the model consumes it: one flat sequence with block-diagonal or tree visibility. */
export interface BatchInput {
  tokens: ArrayLike<number>;
  positions: ArrayLike<number>;
  end: ArrayLike<number>;
  /** Per row, for blocks that do not nest (SDCC's student and teacher): see AttentionMask.grouped. */
  group?: ArrayLike<number>;
}

export interface ForwardOptions {
  /**
   * The backward covers only the first `rows` rows, whose visibility among themselves is `end`
   * (rows after them are forward-only, e.g. SDCC's teacher: no gradient flows into them, and the
   * first rows never see them). Default: every row, with the forward's end.
   */
  backward?: { rows: number; end: ArrayLike<number> };
  /**
   * No backward will run (a teacher, scoring): two layers' activations, alternating (layer l writes
   * over layer l − 2's, which layer l − 1 has consumed), instead of one set per layer, and no
   * pre-GELU copy. The forward computes the same values; encodeBackward refuses.
   */
  forwardOnly?: boolean;
}

/** Layer l's activations: its block's buffers (the input is layer l − 1's x2) and attention's log-sum-exp. */
type LayerActivations = Omit<BlockBuffers, 'x' | 'out'> & {
  lse: GPUBuffer; // (NH, N)
  x2: GPUBuffer; // (N, C): residual after the MLP = next layer's input
};

/** A forward pass recorded for one batch: encode it (and its backward) as often as needed. */
export interface ForwardPass {
  model: GpuModel;
  N: number;
  input: BatchInput;
  mask: AttentionMask;
  /** (N, V) logits of every row. */
  logits: GPUBuffer;
  launches: Launch[];
  /** Records the forward into a pass. */
  encode(pass: GPUComputePassEncoder): void;
  /** Rows the backward covers (N unless options.backward says fewer). */
  backwardRows: number;
  /** Records the backward from `dLogits` (backwardRows, V) into a pass: writes every parameter gradient. */
  encodeBackward(pass: GPUComputePassEncoder, dLogits: GPUBuffer): void;
  destroy(): void;
}

/** Launches between two attention dispatches, in order; attention (of layer `attention`) is encoded by its own binding. */
type Step = Launch[] | { attention: number };

/** The embedding and every block of a forward over one batch: what createForward and createHiddenForward share. */
interface Trunk {
  N: number;
  mask: AttentionMask;
  /** Layer l's activations (with forwardOnly, one of two sets, alternating). */
  layer(l: number): LayerActivations;
  /** (N, C): layer l's input, x0 for l = 0; layerInput(L) is the last block's output. */
  layerInput(l: number): GPUBuffer;
  steps: Step[];
  /** Creates an activation buffer owned by the forward (destroyed with it). */
  buf(label: string, floats: number): GPUBuffer;
  owned: GPUBuffer[];
}

function recordTrunk(model: GpuModel, input: BatchInput, keep: boolean, logitRows: number): Trunk {
  const { gpu, config } = model;
  const { device } = gpu;
  const N = input.tokens.length;
  if (input.positions.length !== N || input.end.length !== N) throw new Error('createForward: tokens, positions and end differ in length');
  if (N === 0) throw new Error('createForward: an empty batch');
  checkModelFits(config, device, N, logitRows);
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = config;
  for (let i = 0; i < N; i++) {
    if (!(input.positions[i] >= 0 && input.positions[i] < P)) {
      throw new Error(`position ${input.positions[i]} at row ${i} is outside the model's ${P} positions`);
    }
    if (!(input.tokens[i] >= 0 && input.tokens[i] < V)) throw new Error(`token ${input.tokens[i]} at row ${i} is outside the vocabulary of ${V}`);
  }
  const owned: GPUBuffer[] = [];
  const buf = (label: string, floats: number) => {
    const b = createStorage(device, `Forward.${label}`, floats * 4);
    owned.push(b);
    return b;
  };
  const tokens = uploadStorage(device, 'Forward.tokens', Uint32Array.from(input.tokens));
  const positions = uploadStorage(device, 'Forward.positions', Uint32Array.from(input.positions));
  owned.push(tokens, positions);
  const mask = createAttentionMask(device, input.end, attentionConfig(gpu.info), { group: input.group });
  const x0 = buf('x0', N * C);
  const layers: LayerActivations[] = [];
  // Kept for a backward: every layer's. Forward only: two sets, layer l in set l % 2.
  for (let l = 0; l < (keep ? L : Math.min(L, 2)); l++) {
    layers.push({
      ln1: buf(`h${l}.ln1`, N * C),
      ln1Mean: buf(`h${l}.ln1Mean`, N),
      ln1Rstd: buf(`h${l}.ln1Rstd`, N),
      qkv: buf(`h${l}.qkv`, N * 3 * C),
      att: buf(`h${l}.att`, N * C),
      lse: buf(`h${l}.lse`, NH * N),
      attProj: buf(`h${l}.attProj`, N * C),
      x1: buf(`h${l}.x1`, N * C),
      ln2: buf(`h${l}.ln2`, N * C),
      ln2Mean: buf(`h${l}.ln2Mean`, N),
      ln2Rstd: buf(`h${l}.ln2Rstd`, N),
      ...(keep ? { fcPre: buf(`h${l}.fcPre`, N * 4 * C) } : {}),
      fc: buf(`h${l}.fc`, N * 4 * C),
      mlpProj: buf(`h${l}.mlpProj`, N * C),
      x2: buf(`h${l}.x2`, N * C),
    });
  }
  const layer = (l: number) => layers[keep ? l : l % 2];
  const layerInput = (l: number) => (l === 0 ? x0 : layer(l - 1).x2);
  const t = model.tensor;
  const steps: Step[] = [];
  steps.push(createEmbedding(device, { N, C, V }, { tokens, positions, wte: t('wte.weight'), wpe: t('wpe.weight'), out: x0 }));
  for (let l = 0; l < L; l++) {
    const block = createBlockLaunches(model, l, N, { ...layer(l), x: layerInput(l), out: layer(l).x2 });
    steps.push(block.toQkv, { attention: l }, block.fromAttention);
  }
  return { N, mask, layer, layerInput, steps, buf, owned };
}

function encodeTrunk(device: GPUDevice, pass: GPUComputePassEncoder, trunk: Trunk, steps: readonly Step[], shape: { NH: number; HS: number }): void {
  for (const s of steps) {
    if (Array.isArray(s)) encodeLaunches(pass, s);
    else {
      const a = trunk.layer(s.attention);
      encodeAttentionForward(device, pass, trunk.mask, shape, { qkv: a.qkv, out: a.att, lse: a.lse });
    }
  }
}

/**
 * A forward through the last block only, no backward: its output `hidden` (N, C) is what the final
 * LayerNorm and the tied head read. Scoring runs those over its targets' predictor rows alone, a
 * block at a time, so a batch's (N, V) logits never exist (src/gpu/score.ts).
 */
export interface HiddenForward {
  N: number;
  /** (N, C): the last block's output (the residual stream before ln_f). */
  hidden: GPUBuffer;
  encode(pass: GPUComputePassEncoder): void;
  destroy(): void;
}

export function createHiddenForward(model: GpuModel, input: BatchInput): HiddenForward {
  const { device } = model.gpu;
  const { nHead: NH, nEmbd: C, nLayer: L } = model.config;
  const trunk = recordTrunk(model, input, false, 0);
  const launches = trunk.steps.flatMap((s) => (Array.isArray(s) ? s : []));
  return {
    N: trunk.N,
    hidden: trunk.layerInput(L),
    encode: (pass) => encodeTrunk(device, pass, trunk, trunk.steps, { NH, HS: C / NH }),
    destroy() {
      releaseLaunches(launches);
      trunk.mask.destroy();
      trunk.owned.forEach((b) => b.destroy());
    },
  };
}

/**
 * Allocates the activations of a batch and records the launches of its forward pass. The backward's
 * launches are recorded on first use. Buffers live until destroy().
 */
export function createForward(model: GpuModel, input: BatchInput, options: ForwardOptions = {}): ForwardPass {
  const { config } = model;
  const { device } = model.gpu;
  const N = input.tokens.length;
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = config;
  const HS = C / NH;
  const NB = options.backward?.rows ?? N;
  if (options.forwardOnly && options.backward) throw new Error('createForward: a forward-only pass has no backward to limit');
  if (!Number.isInteger(NB) || NB < 1 || NB > N) throw new Error(`createForward: a backward over ${NB} of ${N} rows`);
  if (options.backward && options.backward.end.length !== NB) throw new Error(`createForward: the backward's end[] has ${options.backward.end.length} rows, not ${NB}`);
  const trunk = recordTrunk(model, input, !options.forwardOnly, N);
  const { mask, layerInput, buf, owned } = trunk;
  const layers = Array.from({ length: options.forwardOnly ? 0 : L }, (_, l) => trunk.layer(l));
  const lnf = buf('lnf', N * C);
  const lnfMean = buf('lnfMean', N);
  const lnfRstd = buf('lnfRstd', N);
  const logits = buf('logits', N * V);
  const t = model.tensor;
  const steps: Step[] = [...trunk.steps];
  const last = layerInput(L);
  steps.push([
    createLayernorm(device, { N, C }, { x: last, weight: t('ln_f.weight'), bias: t('ln_f.bias'), out: lnf, mean: lnfMean, rstd: lnfRstd }),
    // The tied head: logits (N, V) = lnf (N, C) · wteᵀ, wte stored (V, C).
    ...createHead(device, { N, C, V }, { x: lnf, wte: t('wte.weight'), logits }),
  ]);
  const launches = steps.flatMap((s) => (Array.isArray(s) ? s : []));

  let backward: { steps: Step[]; launches: Launch[]; index: EmbeddingIndex; dLogits: GPUBuffer } | undefined;
  const recordBackward = (dLogits: GPUBuffer) => {
    const g = model.grad;
    const dres = buf('dres', NB * C); // gradient of the residual stream at the current depth
    const dln = buf('dln', NB * C);
    const datt = buf('datt', NB * C);
    const dqkv = buf('dqkv', NB * 3 * C);
    const dfc = buf('dfc', NB * 4 * C);
    const dPre = buf('dPre', NB * 4 * C);
    const delta = buf('delta', NH * N); // stride N, like lse
    // Over the first NB rows: their own visibility, reading lse at the forward's stride.
    if (input.group && !options.backward) throw new Error('createForward: a grouped batch needs options.backward (its groups serve the forward only)');
    const backMask = options.backward ? createAttentionMask(device, options.backward.end, mask.config, { lseStride: N }) : mask;
    if (backMask !== mask) owned.push(backMask.buffer, backMask.params, backMask.visits);
    const index = uploadEmbeddingIndex(device, Array.from({ length: NB }, (_, i) => input.tokens[i]), Array.from({ length: NB }, (_, i) => input.positions[i]), V, P);
    const bsteps: Step[] = [];
    bsteps.push([
      // Head: dlnf = dLogits · wte, dwte = dLogitsᵀ · lnf (written first; the embedding adds to it).
      ...createMatmulBackward(device, { M: NB, K: C, N: V }, { x: lnf, w: t('wte.weight'), dY: dLogits, dx: dln, dw: g('wte.weight') }, { transB: true }),
      ...createLayernormBackward(device, { N: NB, C }, {
        dOut: dln, x: last, weight: t('ln_f.weight'), mean: lnfMean, rstd: lnfRstd, dx: dres, dweight: g('ln_f.weight'), dbias: g('ln_f.bias'),
      }),
    ]);
    for (let l = L - 1; l >= 0; l--) {
      const a = layers[l];
      const h = `h.${l}.`;
      bsteps.push([
        ...createMatmulBackward(device, { M: NB, K: 4 * C, N: C }, {
          x: a.fc, w: t(`${h}mlp.c_proj.weight`), dY: dres, dx: dfc, dw: g(`${h}mlp.c_proj.weight`), dbias: g(`${h}mlp.c_proj.bias`),
        }),
        ...createMatmulBackward(device, { M: NB, K: C, N: 4 * C }, {
          x: a.ln2, w: t(`${h}mlp.c_fc.weight`), dY: dfc, pre: a.fcPre!, dPre, dx: dln, dw: g(`${h}mlp.c_fc.weight`), dbias: g(`${h}mlp.c_fc.bias`),
        }),
        ...createLayernormBackward(device, { N: NB, C }, {
          dOut: dln, x: a.x1, weight: t(`${h}ln_2.weight`), mean: a.ln2Mean, rstd: a.ln2Rstd, dx: dres, dweight: g(`${h}ln_2.weight`), dbias: g(`${h}ln_2.bias`),
        }, { accumulateDx: true }),
        ...createMatmulBackward(device, { M: NB, K: C, N: C }, {
          x: a.att, w: t(`${h}attn.c_proj.weight`), dY: dres, dx: datt, dw: g(`${h}attn.c_proj.weight`), dbias: g(`${h}attn.c_proj.bias`),
        }),
      ]);
      bsteps.push({ attention: l });
      bsteps.push([
        ...createMatmulBackward(device, { M: NB, K: C, N: 3 * C }, {
          x: a.ln1, w: t(`${h}attn.c_attn.weight`), dY: dqkv, dx: dln, dw: g(`${h}attn.c_attn.weight`), dbias: g(`${h}attn.c_attn.bias`),
        }),
        ...createLayernormBackward(device, { N: NB, C }, {
          dOut: dln, x: layerInput(l), weight: t(`${h}ln_1.weight`), mean: a.ln1Mean, rstd: a.ln1Rstd, dx: dres, dweight: g(`${h}ln_1.weight`), dbias: g(`${h}ln_1.bias`),
        }, { accumulateDx: true }),
      ]);
    }
    bsteps.push(createEmbeddingBackward(device, { N: NB, C, V, P }, index, { dOut: dres, dwte: g('wte.weight'), dwpe: g('wpe.weight') }, { accumulateWte: true }));
    // Backward attention of layer l reads datt and writes dqkv, through its own binding.
    const encodeAttention = (pass: GPUComputePassEncoder, l: number) =>
      encodeAttentionBackward(device, pass, backMask, { NH, HS }, { qkv: layers[l].qkv, out: layers[l].att, lse: layers[l].lse, dOut: datt, delta, dqkv });
    backward = { steps: bsteps, launches: bsteps.flatMap((s) => (Array.isArray(s) ? s : [])), index, dLogits };
    return encodeAttention;
  };
  let encodeBackwardAttention: ((pass: GPUComputePassEncoder, l: number) => void) | undefined;

  return {
    model,
    N,
    input,
    mask,
    logits,
    launches,
    backwardRows: NB,
    encode(pass) {
      encodeTrunk(device, pass, trunk, steps, { NH, HS });
    },
    encodeBackward(pass, dLogits) {
      if (options.forwardOnly) throw new Error('createForward: a forward-only pass keeps no activations for a backward');
      if (!backward || backward.dLogits !== dLogits) {
        if (backward) {
          releaseLaunches(backward.launches);
          backward.index.destroy();
        }
        encodeBackwardAttention = recordBackward(dLogits);
      }
      for (const s of backward!.steps) {
        if (Array.isArray(s)) encodeLaunches(pass, s);
        else encodeBackwardAttention!(pass, s.attention);
      }
    },
    destroy() {
      releaseLaunches(launches);
      if (backward) {
        releaseLaunches(backward.launches);
        backward.index.destroy();
      }
      mask.destroy();
      owned.forEach((b) => b.destroy());
    },
  };
}
