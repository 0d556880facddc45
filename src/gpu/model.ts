// The GPT-2 model on the GPU (docs/model.md): parameters and their gradients in one flat buffer each
// (laid out by parameterLayout, every tensor 256-byte aligned so it binds on its own), and the
// launches of a forward and a backward pass over one packed batch (tokens, positions, end[]), or
// of a forward alone that keeps two layers' activations (scoring, SDCC's teacher).

import type { ModelConfig } from '../model/config';
import { headSize } from '../model/config';
import { packParameters, parameterLayout, unpackParameters, type ModelWeights, type ParameterLayout } from '../model/params';
import { createOwner, createStorage, readFloat32 } from './runtime/buffers';
import type { Gpu } from './runtime/device';
import { encodeLaunches, releaseLaunches, type BufferRef, type Launch } from './runtime/kernel';
import { createAdd } from './kernels/add/add';
import { attentionConfig, createAttentionMask, encodeAttentionBackward, encodeAttentionForward } from './kernels/attention/attention';
import { createEmbedding, createEmbeddingBackward, uploadEmbeddingIndex } from './kernels/embedding/embedding';
import { createHead } from './head';
import { bindingLimit, GpuLimitError, rowBlocks } from './runtime/limits';
import { createLayernorm, createLayernormBackward } from './kernels/layernorm/layernorm';
import { createMatmul } from './kernels/matmul/matmul';
import { createMatmulBackward } from './kernels/matmul-backward/matmul-backward';

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
      createLayernorm(
        device,
        { N: rows, C },
        { x: b.x1, weight: t(`${h}ln_2.weight`), bias: t(`${h}ln_2.bias`), out: b.ln2, mean: b.ln2Mean, rstd: b.ln2Rstd },
      ),
      createMatmul(
        device,
        { M: rows, K: C, N: 4 * C },
        { x: b.ln2, w: t(`${h}mlp.c_fc.weight`), bias: t(`${h}mlp.c_fc.bias`), y: b.fc, pre: b.fcPre },
        { gelu: true },
      ),
      createMatmul(device, { M: rows, K: 4 * C, N: C }, { x: b.fc, w: t(`${h}mlp.c_proj.weight`), bias: t(`${h}mlp.c_proj.bias`), y: b.mlpProj }),
      createAdd(device, rows * C, { a: b.x1, b: b.mlpProj, out: b.out }),
    ],
  };
}

/** ln_f and the tied head over `rows` rows: logits (rows, V) = lnf (rows, C) · wteᵀ, wte stored (V, C). */
export function createLogitsLaunches(
  model: GpuModel,
  rows: number,
  b: { x: BufferRef; lnf: GPUBuffer; mean: GPUBuffer; rstd: GPUBuffer; logits: GPUBuffer },
): Launch[] {
  const { device } = model.gpu;
  const { nEmbd: C, vocabSize: V } = model.config;
  const t = model.tensor;
  return [
    createLayernorm(device, { N: rows, C }, { x: b.x, weight: t('ln_f.weight'), bias: t('ln_f.bias'), out: b.lnf, mean: b.mean, rstd: b.rstd }),
    ...createHead(device, { N: rows, C, V }, { x: b.lnf, wte: t('wte.weight'), logits: b.logits }),
  ];
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

/** Floats per row of each of layer l's activations, in allocation order (lse: one per head). */
const layerWidths = (C: number, NH: number): Record<keyof LayerActivations, number> => ({
  ln1: C,
  ln1Mean: 1,
  ln1Rstd: 1,
  qkv: 3 * C,
  att: C,
  lse: NH,
  attProj: C,
  x1: C,
  ln2: C,
  ln2Mean: 1,
  ln2Rstd: 1,
  fcPre: 4 * C,
  fc: 4 * C,
  mlpProj: C,
  x2: C,
});

/** A forward pass recorded for one batch: encode it (and its backward) as often as needed. */
export interface ForwardPass {
  N: number;
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

const launchesOf = (steps: readonly Step[]) => steps.flatMap((s) => (Array.isArray(s) ? s : []));

function encodeSteps(pass: GPUComputePassEncoder, steps: readonly Step[], attention: (l: number) => void): void {
  for (const s of steps) {
    if (Array.isArray(s)) encodeLaunches(pass, s);
    else attention(s.attention);
  }
}

/** The embedding and every block of a forward over one batch: what createForward and createHiddenForward share. */
function recordTrunk(model: GpuModel, input: BatchInput, keep: boolean, logitRows: number) {
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
  const owner = createOwner(device, 'Forward');
  const tokens = owner.upload('tokens', Uint32Array.from(input.tokens));
  const positions = owner.upload('positions', Uint32Array.from(input.positions));
  const mask = owner.own(createAttentionMask(device, input.end, attentionConfig(gpu.info), { group: input.group }));
  const x0 = owner.buf('x0', N * C);
  // Kept for a backward: every layer's. Forward only: two sets, layer l in set l % 2, no fcPre.
  const widths = Object.entries(layerWidths(C, NH)).filter(([name]) => keep || name !== 'fcPre');
  const layers = Array.from(
    { length: keep ? L : Math.min(L, 2) },
    (_, l) => Object.fromEntries(widths.map(([name, width]) => [name, owner.buf(`h${l}.${name}`, N * width)])) as LayerActivations,
  );
  /** Layer l's activations (with forwardOnly, one of two sets, alternating). */
  const layer = (l: number) => layers[keep ? l : l % 2];
  /** (N, C): layer l's input, x0 for l = 0; layerInput(L) is the last block's output. */
  const layerInput = (l: number) => (l === 0 ? x0 : layer(l - 1).x2);
  const t = model.tensor;
  const steps: Step[] = [createEmbedding(device, { N, C, V }, { tokens, positions, wte: t('wte.weight'), wpe: t('wpe.weight'), out: x0 })];
  for (let l = 0; l < L; l++) {
    const block = createBlockLaunches(model, l, N, { ...layer(l), x: layerInput(l), out: layer(l).x2 });
    steps.push(block.toQkv, { attention: l }, block.fromAttention);
  }
  const encode = (pass: GPUComputePassEncoder) =>
    encodeSteps(pass, steps, (l) => {
      const a = layer(l);
      encodeAttentionForward(device, pass, mask, { NH, HS: C / NH }, { qkv: a.qkv, out: a.att, lse: a.lse });
    });
  owner.own({ destroy: () => releaseLaunches(launchesOf(steps)) });
  return { N, mask, layer, layerInput, steps, encode, owner };
}

/**
 * A forward through the last block only, no backward: its output `hidden` (N, C) is what the final
 * LayerNorm and the tied head read. Scoring runs those over its targets' predictor rows alone, a
 * block at a time, so a batch's (N, V) logits never exist (src/gpu/score.ts).
 */
export function createHiddenForward(model: GpuModel, input: BatchInput) {
  const trunk = recordTrunk(model, input, false, 0);
  return {
    N: trunk.N,
    /** (N, C): the last block's output (the residual stream before ln_f). */
    hidden: trunk.layerInput(model.config.nLayer),
    encode: trunk.encode,
    destroy: trunk.owner.destroy,
  };
}

/**
 * Allocates the activations of a batch and records the launches of its forward pass. The backward's
 * launches are recorded on first use. Buffers live until destroy().
 */
export function createForward(model: GpuModel, input: BatchInput, options: ForwardOptions = {}): ForwardPass {
  const { device } = model.gpu;
  const N = input.tokens.length;
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V, nPositions: P } = model.config;
  const NB = options.backward?.rows ?? N;
  if (options.forwardOnly && options.backward) throw new Error('createForward: a forward-only pass has no backward to limit');
  if (!Number.isInteger(NB) || NB < 1 || NB > N) throw new Error(`createForward: a backward over ${NB} of ${N} rows`);
  if (options.backward && options.backward.end.length !== NB)
    throw new Error(`createForward: the backward's end[] has ${options.backward.end.length} rows, not ${NB}`);
  const trunk = recordTrunk(model, input, !options.forwardOnly, N);
  const { mask, layerInput, owner } = trunk;
  const { buf } = owner;
  const lnf = buf('lnf', N * C);
  const lnfMean = buf('lnfMean', N);
  const lnfRstd = buf('lnfRstd', N);
  const logits = buf('logits', N * V);
  const t = model.tensor;
  const last = layerInput(L);
  trunk.steps.push(createLogitsLaunches(model, N, { x: last, lnf, mean: lnfMean, rstd: lnfRstd, logits }));

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
    const backMask = options.backward ? owner.own(createAttentionMask(device, options.backward.end, mask.config, { lseStride: N })) : mask;
    const index = uploadEmbeddingIndex(
      device,
      Array.from({ length: NB }, (_, i) => input.tokens[i]),
      Array.from({ length: NB }, (_, i) => input.positions[i]),
      V,
      P,
    );
    /** The backward of linear layer `p` (K → N features): dx, and the gradients of its weight and bias. */
    const linear = (p: string, K: number, n: number, b: { x: GPUBuffer; dY: GPUBuffer; dx: GPUBuffer; pre?: GPUBuffer; dPre?: GPUBuffer }) =>
      createMatmulBackward(device, { M: NB, K, N: n }, { ...b, w: t(`${p}.weight`), dw: g(`${p}.weight`), dbias: g(`${p}.bias`) });
    /** The backward of LayerNorm `p` into dres: dx (added to the residual's gradient inside a block), dweight and dbias. */
    const norm = (p: string, x: GPUBuffer, mean: GPUBuffer, rstd: GPUBuffer, accumulateDx: boolean) =>
      createLayernormBackward(
        device,
        { N: NB, C },
        {
          dOut: dln,
          x,
          weight: t(`${p}.weight`),
          mean,
          rstd,
          dx: dres,
          dweight: g(`${p}.weight`),
          dbias: g(`${p}.bias`),
        },
        { accumulateDx },
      );
    const steps: Step[] = [
      [
        // Head: dlnf = dLogits · wte, dwte = dLogitsᵀ · lnf (written first; the embedding adds to it).
        ...createMatmulBackward(device, { M: NB, K: C, N: V }, { x: lnf, w: t('wte.weight'), dY: dLogits, dx: dln, dw: g('wte.weight') }, { transB: true }),
        ...norm('ln_f', last, lnfMean, lnfRstd, false),
      ],
    ];
    for (let l = L - 1; l >= 0; l--) {
      const a = trunk.layer(l);
      const h = `h.${l}.`;
      steps.push([
        ...linear(`${h}mlp.c_proj`, 4 * C, C, { x: a.fc, dY: dres, dx: dfc }),
        ...linear(`${h}mlp.c_fc`, C, 4 * C, { x: a.ln2, dY: dfc, pre: a.fcPre!, dPre, dx: dln }),
        ...norm(`${h}ln_2`, a.x1, a.ln2Mean, a.ln2Rstd, true),
        ...linear(`${h}attn.c_proj`, C, C, { x: a.att, dY: dres, dx: datt }),
      ]);
      steps.push({ attention: l });
      steps.push([...linear(`${h}attn.c_attn`, C, 3 * C, { x: a.ln1, dY: dqkv, dx: dln }), ...norm(`${h}ln_1`, layerInput(l), a.ln1Mean, a.ln1Rstd, true)]);
    }
    steps.push(
      createEmbeddingBackward(device, { N: NB, C, V, P }, index, { dOut: dres, dwte: g('wte.weight'), dwpe: g('wpe.weight') }, { accumulateWte: true }),
    );
    // Backward attention of layer l reads datt and writes dqkv, through its own binding.
    const attention = (pass: GPUComputePassEncoder, l: number) => {
      const a = trunk.layer(l);
      encodeAttentionBackward(device, pass, backMask, { NH, HS: C / NH }, { qkv: a.qkv, out: a.att, lse: a.lse, dOut: datt, delta, dqkv });
    };
    return { steps, index, dLogits, attention };
  };
  let backward: ReturnType<typeof recordBackward> | undefined;
  const releaseBackward = () => {
    if (!backward) return;
    releaseLaunches(launchesOf(backward.steps));
    backward.index.destroy();
  };

  return {
    N,
    logits,
    launches: launchesOf(trunk.steps),
    backwardRows: NB,
    encode: trunk.encode,
    encodeBackward(pass, dLogits) {
      if (options.forwardOnly) throw new Error('createForward: a forward-only pass keeps no activations for a backward');
      if (!backward || backward.dLogits !== dLogits) {
        releaseBackward();
        backward = recordBackward(dLogits);
      }
      const { attention } = backward;
      encodeSteps(pass, backward.steps, (l) => attention(pass, l));
    },
    destroy() {
      releaseBackward();
      owner.destroy();
    },
  };
}
