// The model families (Llama 3.x / SmolLM2, Qwen2.5, Qwen3; src/model/family/config.ts) on the GPU:
// weights streamed from a model folder one tensor at a time into one buffer each, kept in the folder's
// format (F32, F16, BF16: the kernels unpack 16-bit weights and accumulate in f32; GPU bytes = file
// bytes up to 4-byte padding), the embedding and an untied head in vocabulary blocks that each fit one
// binding; and a forward over a packed batch (tokens, logical positions, tree mask end[]) to the last
// block's output, which scoring (score.ts) turns into its targets' log-probabilities a block at a time.

import { type FamilyConfig, type FolderTensor, type FolderTensorSource, ropeInverseFrequencies, type WeightDtype } from '../model/family/config';
import { createOwner, uploadStorage } from './runtime/buffers';
import type { Gpu } from './runtime/device';
import { ATTENTION_LONG_MAX_HS, attentionConfig, createAttentionForward, createAttentionMask, fitAttentionConfig } from './kernels/attention/attention';
import { encodeLaunches, releaseLaunches, type BufferRef, type Launch } from './runtime/kernel';
import { createEmbed, type TableBlock } from './kernels/embed/embed';
import { createLinear } from './kernels/linear/linear';
import { createRmsnorm } from './kernels/rmsnorm/rmsnorm';
import { createRope, ropeRotation } from './kernels/rope/rope';
import { createSwiglu } from './kernels/swiglu/swiglu';
import { dtypeBytes } from './kernels/weight-format/weight-format';
import { MLP_BLOCK_BYTES, mlpRows } from './family-memory';
import { BLOCK_ROWS_ALIGN, bindingLimit, GpuLimitError, rowBlocks, subBinding } from './runtime/limits';
import { mib, type BatchInput } from './model';
import type { HiddenForward, ScoringModel } from './scoring-model';

/** One weight tensor on the GPU, in its folder format. */
export interface GpuWeight {
  buffer: GPUBuffer;
  dtype: WeightDtype;
  shape: readonly number[];
}

/** A (V, C) table (the embedding, an untied head) in vocabulary blocks, one buffer each. */
export interface GpuTable {
  dtype: WeightDtype;
  blocks: TableBlock[];
}

export interface FamilyGpuModel {
  gpu: Gpu;
  family: FamilyConfig;
  /** A tensor by its Hugging Face name (the embedding and head excepted: `embedding`, `head`). */
  tensor(name: string): GpuWeight;
  embedding: GpuTable;
  /** lm_head, or the embedding itself when the head is tied. */
  head: GpuTable;
  /** Bytes the weights take on the GPU, and in the folder. */
  weightBytes: number;
  fileBytes: number;
  /** RoPE's inverse frequencies (HS / 2), scaled as the config says. */
  invFreq: Float64Array;
  destroy(): void;
}

export interface FamilyLoadProgress {
  bytes: number;
  total: number;
}

/** The tensors a family model folder holds, by name, with their shapes. */
export function familyTensorShapes(config: FamilyConfig): Map<string, number[]> {
  const { vocabSize: V, hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS } = config;
  const shapes = new Map<string, number[]>([
    ['model.embed_tokens.weight', [V, C]],
    ['model.norm.weight', [C]],
  ]);
  if (!config.tieWordEmbeddings) shapes.set('lm_head.weight', [V, C]);
  for (let l = 0; l < config.nLayer; l++) {
    const p = `model.layers.${l}.`;
    shapes.set(`${p}input_layernorm.weight`, [C]);
    shapes.set(`${p}post_attention_layernorm.weight`, [C]);
    shapes.set(`${p}self_attn.q_proj.weight`, [NH * HS, C]);
    shapes.set(`${p}self_attn.k_proj.weight`, [NKV * HS, C]);
    shapes.set(`${p}self_attn.v_proj.weight`, [NKV * HS, C]);
    shapes.set(`${p}self_attn.o_proj.weight`, [C, NH * HS]);
    if (config.qkvBias) {
      shapes.set(`${p}self_attn.q_proj.bias`, [NH * HS]);
      shapes.set(`${p}self_attn.k_proj.bias`, [NKV * HS]);
      shapes.set(`${p}self_attn.v_proj.bias`, [NKV * HS]);
    }
    if (config.qkNorm) {
      shapes.set(`${p}self_attn.q_norm.weight`, [HS]);
      shapes.set(`${p}self_attn.k_norm.weight`, [HS]);
    }
    shapes.set(`${p}mlp.gate_proj.weight`, [FF, C]);
    shapes.set(`${p}mlp.up_proj.weight`, [FF, C]);
    shapes.set(`${p}mlp.down_proj.weight`, [C, FF]);
  }
  return shapes;
}

/** Tensors a folder may carry that the model does not read: a tied model's copy of the head, RoPE tables. */
function ignored(config: FamilyConfig, name: string): boolean {
  return (config.tieWordEmbeddings && name === 'lm_head.weight') || name.endsWith('.rotary_emb.inv_freq');
}

/** What the kernels need of a config; one line naming what does not hold. */
export function checkFamilyConfig(config: FamilyConfig): void {
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS } = config;
  if (NH % NKV !== 0) throw new Error(`${config.name}: ${NH} attention heads are not a multiple of ${NKV} key/value heads`);
  if (HS % 4 !== 0 || HS > ATTENTION_LONG_MAX_HS)
    throw new Error(`${config.name}: head_dim ${HS} is not supported: the attention kernel takes a multiple of 4, at most ${ATTENTION_LONG_MAX_HS}`);
  if (C % 2 !== 0 || FF % 2 !== 0)
    throw new Error(`${config.name}: hidden_size ${C} and intermediate_size ${FF} must be even (16-bit weights are read in pairs)`);
}

/** A GPU buffer holding a tensor's bytes (padded to whole words). */
function uploadBytes(device: GPUDevice, label: string, data: Uint8Array): GPUBuffer {
  const size = Math.max(16, Math.ceil(data.byteLength / 4) * 4);
  if (size > device.limits.maxBufferSize) {
    throw new GpuLimitError(`${label}: a ${mib(size)} tensor, the adapter allows buffers of at most ${mib(device.limits.maxBufferSize)} (maxBufferSize)`);
  }
  const buffer = device.createBuffer({ label, size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC });
  if (data.byteLength % 4 === 0 && data.byteOffset % 4 === 0) device.queue.writeBuffer(buffer, 0, data);
  else {
    const padded = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
    padded.set(data);
    device.queue.writeBuffer(buffer, 0, padded);
  }
  return buffer;
}

/** A (V, C) table's vocabulary blocks, each its own buffer within one binding. */
function uploadTable(device: GPUDevice, label: string, tensor: FolderTensor, V: number, C: number): GpuTable {
  const rowBytes = C * dtypeBytes(tensor.dtype);
  const blocks = rowBlocks(V, rowBytes / 4, bindingLimit(device), `model does not fit the adapter: ${tensor.name}`);
  return {
    dtype: tensor.dtype,
    blocks: blocks.map((block) => ({
      block,
      ref: uploadBytes(device, `${label}[${block.first}..${block.end})`, tensor.data.subarray(block.first * rowBytes, block.end * rowBytes)),
    })),
  };
}

/**
 * Streams a model folder's tensors to the GPU, one at a time (each tensor's bytes are released once
 * queued): every tensor checked against the config's shape, every one the config needs present.
 */
export async function loadFamilyModel(
  gpu: Gpu,
  config: FamilyConfig,
  source: FolderTensorSource,
  onProgress?: (progress: FamilyLoadProgress) => void,
): Promise<FamilyGpuModel> {
  const { device } = gpu;
  checkFamilyConfig(config);
  const shapes = familyTensorShapes(config);
  const limit = bindingLimit(device);
  const tensors = new Map<string, GpuWeight>();
  let embedding: GpuTable | undefined;
  let head: GpuTable | undefined;
  let fileBytes = 0;
  const destroyAll = () => {
    for (const t of tensors.values()) t.buffer.destroy();
    for (const table of [embedding, head]) for (const b of table?.blocks ?? []) (b.ref as GPUBuffer).destroy();
  };
  try {
    for await (const tensor of source.tensors()) {
      fileBytes += tensor.data.byteLength;
      if (!ignored(config, tensor.name)) {
        const want = shapes.get(tensor.name);
        if (!want) throw new Error(`${config.name}: unexpected tensor ${tensor.name} for ${config.architecture}`);
        if (want.length !== tensor.shape.length || want.some((n, i) => tensor.shape[i] !== n)) {
          throw new Error(`${config.name}: tensor ${tensor.name} has shape [${tensor.shape.join(', ')}], the config says [${want.join(', ')}]`);
        }
        if (tensor.data.byteLength !== want.reduce((a, b) => a * b, 1) * dtypeBytes(tensor.dtype)) {
          throw new Error(`${config.name}: tensor ${tensor.name} holds ${tensor.data.byteLength} bytes, not its shape's ${tensor.dtype} elements`);
        }
        const label = `FamilyModel.${tensor.name}`;
        if (tensor.name === 'model.embed_tokens.weight') embedding = uploadTable(device, label, tensor, config.vocabSize, config.hiddenSize);
        else if (tensor.name === 'lm_head.weight') head = uploadTable(device, label, tensor, config.vocabSize, config.hiddenSize);
        else {
          if (tensor.data.byteLength > limit) {
            throw new GpuLimitError(
              `model does not fit the adapter: ${tensor.name} takes ${mib(tensor.data.byteLength)}, the adapter binds at most ${mib(limit)} (maxStorageBufferBindingSize)`,
            );
          }
          tensors.set(tensor.name, { buffer: uploadBytes(device, label, tensor.data), dtype: tensor.dtype, shape: tensor.shape });
        }
      }
      onProgress?.({ bytes: fileBytes, total: source.totalBytes });
    }
    const missing = [...shapes.keys()].filter(
      (name) => !tensors.has(name) && !(name === 'model.embed_tokens.weight' && embedding) && !(name === 'lm_head.weight' && head),
    );
    if (missing.length)
      throw new Error(
        `${config.name}: the model folder lacks ${missing.length} tensor${missing.length > 1 ? 's' : ''}: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}`,
      );
  } catch (error) {
    destroyAll();
    throw error;
  }
  const table = embedding as GpuTable; // present: checked with the missing tensors
  const tableBytes = (t: GpuTable) => t.blocks.reduce((n, b) => n + (b.ref as GPUBuffer).size, 0);
  const weightBytes = [...tensors.values()].reduce((n, t) => n + t.buffer.size, 0) + tableBytes(table) + (head ? tableBytes(head) : 0);
  return {
    gpu,
    family: config,
    tensor(name) {
      const t = tensors.get(name);
      if (!t) throw new Error(`FamilyModel: no tensor ${name}`);
      return t;
    },
    embedding: table,
    head: head ?? table,
    weightBytes,
    fileBytes,
    invFreq: ropeInverseFrequencies(config),
    destroy: destroyAll,
  };
}

/** Rows of the MLP at a time: a multiple of BLOCK_ROWS_ALIGN (aligned row slices), all N when they fit. */
export function mlpBlockRows(model: FamilyGpuModel, N: number): number {
  const FF = model.family.intermediateSize;
  const limit = bindingLimit(model.gpu.device);
  const rows = mlpRows(FF, N, limit);
  if (rows === 0) {
    const bytes = Math.min(MLP_BLOCK_BYTES, limit);
    throw new GpuLimitError(
      `model does not fit the adapter: ${BLOCK_ROWS_ALIGN} rows of the MLP need a ${mib(BLOCK_ROWS_ALIGN * 2 * FF * 4)} binding, it binds at most ${mib(bytes)}`,
    );
  }
  return rows;
}

/** Floats per row of the activations a family forward keeps over all of a batch's rows. */
function rowFloats(config: FamilyConfig) {
  const { hiddenSize: C, nHead: NH, nKvHead: NKV, headDim: HS } = config;
  return { x: C, h: C, qkv: (NH + 2 * NKV) * HS, att: NH * HS, lse: NH };
}

/**
 * Records a forward over one packed batch to the last block's output (N, C), the residual stream
 * before the final norm: embedding; per layer RMSNorm, q | k | v projections (+ Qwen2's biases) into
 * one qkv row, Qwen3's q/k norms and RoPE at each row's position, tree-masked grouped-query attention,
 * o_proj added to the residual in place, RMSNorm, and the SwiGLU MLP over blocks of rows added in place.
 * Every layer reuses one set of activations (no backward).
 */
export function createFamilyForward(model: FamilyGpuModel, input: BatchInput): HiddenForward {
  const { gpu, family: config } = model;
  const { device } = gpu;
  const N = input.tokens.length;
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS, vocabSize: V, maxPositionEmbeddings: P } = config;
  if (input.positions.length !== N || input.end.length !== N) throw new Error('createFamilyForward: tokens, positions and end differ in length');
  if (N === 0) throw new Error('createFamilyForward: an empty batch');
  let maxPosition = 0;
  for (let i = 0; i < N; i++) {
    const p = input.positions[i];
    if (!(Number.isInteger(p) && p >= 0 && p < P)) throw new Error(`position ${p} at row ${i} is outside the model's ${P} positions`);
    if (!(input.tokens[i] >= 0 && input.tokens[i] < V)) throw new Error(`token ${input.tokens[i]} at row ${i} is outside the vocabulary of ${V}`);
    maxPosition = Math.max(maxPosition, p);
  }
  const limit = bindingLimit(device);
  const widths = rowFloats(config);
  const widest = Math.max(...Object.values(widths));
  if (N * widest * 4 > limit) {
    throw new GpuLimitError(
      `model does not fit the adapter: a ${N}-row batch needs a ${mib(N * widest * 4)} binding, the adapter binds at most ${mib(limit)} (maxStorageBufferBindingSize)`,
    );
  }
  const W = widths.qkv;
  const owner = createOwner(device, 'FamilyForward');
  const { buf } = owner;
  const tokens = owner.upload('tokens', Uint32Array.from(input.tokens));
  const positions = owner.upload('positions', Uint32Array.from(input.positions));
  const rotation = owner.own(uploadStorage(device, 'FamilyForward.rotation', ropeRotation(model.invFreq, maxPosition + 1)));
  const tiles = fitAttentionConfig(attentionConfig(gpu.info), HS, device);
  const mask = owner.own(createAttentionMask(device, input.end, tiles, { group: input.group }));
  const x = buf('x', N * C); // (N, C): the residual stream, updated in place layer after layer
  const h = buf('h', N * C); // (N, C): a norm's output
  const qkv = buf('qkv', N * W); // (N, (NH + 2·NKV)·HS)
  const att = buf('att', N * NH * HS); // (N, NH·HS)
  const lse = buf('lse', NH * N); // (NH, N)
  const B = mlpBlockRows(model, N);
  const gateUp = buf('gateUp', B * 2 * FF); // (B, 2·FF): gate | up
  const act = buf('act', B * FF); // (B, FF)
  const t = model.tensor;
  const rows = (ref: GPUBuffer, r0: number, n: number, width: number) => subBinding(ref, r0 * width * 4, n * width * 4);
  /** y (M, ·) [+]= x · weightᵀ (+ bias), into columns [offsetY, offsetY + out) of rows of ldY. */
  const linear = (M: number, xRef: BufferRef, name: string, y: BufferRef, o: { ldY?: number; offsetY?: number; bias?: string; accumulate?: boolean } = {}) => {
    const w = t(`${name}.weight`);
    const bias = o.bias ? t(o.bias) : undefined;
    if (bias && bias.dtype !== w.dtype) throw new Error(`${name}: bias ${bias.dtype}, weight ${w.dtype}`);
    const [out, K] = w.shape;
    return createLinear(
      device,
      { M, K, N: out, ldY: o.ldY, offsetY: o.offsetY },
      w.dtype,
      { x: xRef, w: w.buffer, bias: bias?.buffer, y },
      { accumulate: o.accumulate },
    );
  };
  const norm = (M: number, xRef: BufferRef, name: string, out: BufferRef) => {
    const w = t(name);
    return createRmsnorm(device, { N: M, C, eps: config.rmsNormEps }, w.dtype, { x: xRef, weight: w.buffer, out });
  };
  const launches: Launch[] = [...createEmbed(device, { N, C }, model.embedding.dtype, { tokens, table: model.embedding.blocks, out: x })];
  for (let l = 0; l < config.nLayer; l++) {
    const p = `model.layers.${l}.`;
    const a = `${p}self_attn.`;
    const bias = (proj: string) => (config.qkvBias ? `${a}${proj}.bias` : undefined);
    launches.push(
      norm(N, x, `${p}input_layernorm.weight`, h),
      linear(N, h, `${a}q_proj`, qkv, { ldY: W, offsetY: 0, bias: bias('q_proj') }),
      linear(N, h, `${a}k_proj`, qkv, { ldY: W, offsetY: NH * HS, bias: bias('k_proj') }),
      linear(N, h, `${a}v_proj`, qkv, { ldY: W, offsetY: (NH + NKV) * HS, bias: bias('v_proj') }),
      createRope(
        device,
        { N, NH, NKV, HS },
        {
          qkv,
          positions,
          rotation,
          norm: config.qkNorm
            ? { q: t(`${a}q_norm.weight`).buffer, k: t(`${a}k_norm.weight`).buffer, dtype: t(`${a}q_norm.weight`).dtype, eps: config.rmsNormEps }
            : undefined,
        },
      ),
      createAttentionForward(device, mask, { NH, NKV, HS }, { qkv, out: att, lse }),
      linear(N, att, `${a}o_proj`, x, { accumulate: true }),
      norm(N, x, `${p}post_attention_layernorm.weight`, h),
    );
    for (let r0 = 0; r0 < N; r0 += B) {
      const n = Math.min(B, N - r0);
      const hRows = rows(h, r0, n, C);
      launches.push(
        linear(n, hRows, `${p}mlp.gate_proj`, gateUp, { ldY: 2 * FF, offsetY: 0 }),
        linear(n, hRows, `${p}mlp.up_proj`, gateUp, { ldY: 2 * FF, offsetY: FF }),
        createSwiglu(device, { R: n, FF }, { gateUp, out: act }),
        linear(n, act, `${p}mlp.down_proj`, rows(x, r0, n, C), { accumulate: true }),
      );
    }
  }
  owner.own({ destroy: () => releaseLaunches(launches) });
  return {
    N,
    hidden: x,
    encode: (pass) => encodeLaunches(pass, launches),
    destroy: owner.destroy,
  };
}

/** The family's scoring view (score.ts): its forward, the final RMSNorm and the head over vocabulary blocks. */
export function familyScoring(model: FamilyGpuModel): ScoringModel {
  const config = model.family;
  const { hiddenSize: C, vocabSize: V } = config;
  const widths = rowFloats(config);
  const { device } = model.gpu;
  return {
    gpu: model.gpu,
    C,
    V,
    rowBytes: Object.values(widths).reduce((a, b) => a + b, 0) * 4 + 8,
    widestRow: Math.max(...Object.values(widths)),
    hiddenForward: (batch) => createFamilyForward(model, batch),
    head(B) {
      const normed = device.createBuffer({ label: 'Score.normed', size: Math.max(16, B * C * 4), usage: GPUBufferUsage.STORAGE });
      const norm = model.tensor('model.norm.weight');
      const { dtype, blocks } = model.head;
      return {
        launches: (n, b) => [
          createRmsnorm(device, { N: n, C, eps: config.rmsNormEps }, norm.dtype, { x: b.x, weight: norm.buffer, out: normed }),
          ...blocks.map(({ block, ref }) =>
            createLinear(device, { M: n, K: C, N: block.end - block.first, ldY: V, offsetY: block.first }, dtype, { x: normed, w: ref, y: b.logits }),
          ),
        ],
        destroy: () => normed.destroy(),
      };
    },
  };
}
