// Incremental decoding of a family model (Llama, Qwen2, Qwen3) with a KV cache: per layer the cache
// keeps the qkv rows (capacity, (NH + 2·NKV)·HS) of every position computed so far, the new rows' q, k
// and v projected straight into it and rotated there; extending the view by M rows runs the row-local
// ops on those rows only and attends them to the cache (decode_attention.wgsl), and the head runs on
// the last row alone. Rows below the first changed position stay after an edit (prefix caching).

import { commonPrefix, type IncrementalDecoder, type LanguageModel } from '../harness/policies/model';
import { createOwner, uploadStorage } from './runtime/buffers';
import { familyScoring, mlpBlockRows, type FamilyGpuModel } from './family-model';
import { createGatherRows } from './kernels/gather-rows/gather-rows';
import { encodeLaunches, releaseLaunches, type BufferRef, type Launch } from './runtime/kernel';
import { createDecodeAttention } from './kernels/attention-decode-gqa/attention-decode-gqa';
import { createEmbed } from './kernels/embed/embed';
import { createLinear } from './kernels/linear/linear';
import { createRmsnorm } from './kernels/rmsnorm/rmsnorm';
import { createRope, ropeRotation } from './kernels/rope/rope';
import { createSwiglu } from './kernels/swiglu/swiglu';
import { bindingLimit, GpuLimitError, subBinding } from './runtime/limits';
import { checkExtend } from './generate';
import { mib } from './model';

/** Positions a decoder's cache holds unless asked for more (at most the model's): 2,048. */
export const DEFAULT_DECODER_CAPACITY = 2048;

export interface FamilyDecoder extends IncrementalDecoder {
  readonly model: FamilyGpuModel;
  /** Rows the cache holds: no live view may be longer. */
  readonly capacity: number;
}

/**
 * A decoder over a family model. The cache (L · capacity · (NH + 2·NKV)·HS floats) and one layer's
 * activations for a capacity-row extend are allocated once; each extend records its launches.
 */
export function createFamilyDecoder(model: FamilyGpuModel, options: { capacity?: number } = {}): FamilyDecoder {
  const { gpu, family: config } = model;
  const { device } = gpu;
  const { hiddenSize: C, intermediateSize: FF, nHead: NH, nKvHead: NKV, headDim: HS, vocabSize: V, nLayer: L } = config;
  const W = (NH + 2 * NKV) * HS;
  const capacity = Math.min(config.maxPositionEmbeddings, options.capacity ?? DEFAULT_DECODER_CAPACITY);
  if (!(Number.isInteger(capacity) && capacity >= 1)) throw new Error(`createFamilyDecoder: capacity ${capacity} is not a row count`);
  const limit = bindingLimit(device);
  if (capacity * W * 4 > limit) {
    throw new GpuLimitError(
      `a KV cache of ${capacity} rows needs ${mib(capacity * W * 4)} per layer, the adapter binds at most ${mib(limit)} (maxStorageBufferBindingSize)`,
    );
  }
  const owner = createOwner(device, 'FamilyDecoder');
  const { buf } = owner;
  const cache = Array.from({ length: L }, (_, l) => buf(`h${l}.qkvCache`, capacity * W)); // (capacity, W) each
  const tokenIds = buf('tokens', capacity); // (M) u32
  const positionIds = buf('positions', capacity); // (M) u32
  const rotation = owner.own(uploadStorage(device, 'FamilyDecoder.rotation', ropeRotation(model.invFreq, capacity)));
  const x = buf('x', capacity * C); // (M, C): the residual stream
  const h = buf('h', capacity * C); // (M, C)
  const att = buf('att', capacity * NH * HS); // (M, NH·HS)
  const B = mlpBlockRows(model, capacity);
  const gateUp = buf('gateUp', B * 2 * FF); // (B, 2·FF)
  const act = buf('act', B * FF); // (B, FF)
  const lastRow = buf('lastRow', 1); // (1) u32: M − 1
  const last = buf('last', C); // (1, C)
  const logits = buf('logits', V); // (1, V)
  const head = owner.own(familyScoring(model).head(1));
  const staging = owner.own(device.createBuffer({ label: 'FamilyDecoder.staging', size: V * 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
  const t = model.tensor;

  const recordStep = (start: number, M: number): Launch[] => {
    const linear = (
      n: number,
      xRef: BufferRef,
      name: string,
      y: BufferRef,
      o: { ldY?: number; offsetY?: number; bias?: string; accumulate?: boolean } = {},
    ) => {
      const w = t(`${name}.weight`);
      const [out, K] = w.shape;
      return createLinear(
        device,
        { M: n, K, N: out, ldY: o.ldY, offsetY: o.offsetY },
        w.dtype,
        { x: xRef, w: w.buffer, bias: o.bias ? t(o.bias).buffer : undefined, y },
        { accumulate: o.accumulate },
      );
    };
    const norm = (n: number, xRef: BufferRef, name: string, out: BufferRef) =>
      createRmsnorm(device, { N: n, C, eps: config.rmsNormEps }, t(name).dtype, { x: xRef, weight: t(name).buffer, out });
    const rows = (ref: GPUBuffer, r0: number, n: number, width: number) => subBinding(ref, r0 * width * 4, n * width * 4);
    const launches: Launch[] = [...createEmbed(device, { N: M, C }, model.embedding.dtype, { tokens: tokenIds, table: model.embedding.blocks, out: x })];
    for (let l = 0; l < L; l++) {
      const p = `model.layers.${l}.`;
      const a = `${p}self_attn.`;
      const bias = (proj: string) => (config.qkvBias ? `${a}${proj}.bias` : undefined);
      const row0 = start * W; // the new rows' first element in the cache
      launches.push(
        norm(M, x, `${p}input_layernorm.weight`, h),
        linear(M, h, `${a}q_proj`, cache[l], { ldY: W, offsetY: row0, bias: bias('q_proj') }),
        linear(M, h, `${a}k_proj`, cache[l], { ldY: W, offsetY: row0 + NH * HS, bias: bias('k_proj') }),
        linear(M, h, `${a}v_proj`, cache[l], { ldY: W, offsetY: row0 + (NH + NKV) * HS, bias: bias('v_proj') }),
        createRope(
          device,
          { N: M, NH, NKV, HS, first: start },
          {
            qkv: cache[l],
            positions: positionIds,
            rotation,
            norm: config.qkNorm
              ? { q: t(`${a}q_norm.weight`).buffer, k: t(`${a}k_norm.weight`).buffer, dtype: t(`${a}q_norm.weight`).dtype, eps: config.rmsNormEps }
              : undefined,
          },
        ),
        createDecodeAttention(device, { NH, NKV, HS, start, M }, { cache: cache[l], out: att }),
        linear(M, att, `${a}o_proj`, x, { accumulate: true }),
        norm(M, x, `${p}post_attention_layernorm.weight`, h),
      );
      for (let r0 = 0; r0 < M; r0 += B) {
        const n = Math.min(B, M - r0);
        launches.push(
          linear(n, rows(h, r0, n, C), `${p}mlp.gate_proj`, gateUp, { ldY: 2 * FF, offsetY: 0 }),
          linear(n, rows(h, r0, n, C), `${p}mlp.up_proj`, gateUp, { ldY: 2 * FF, offsetY: FF }),
          createSwiglu(device, { R: n, FF }, { gateUp, out: act }),
          linear(n, act, `${p}mlp.down_proj`, rows(x, r0, n, C), { accumulate: true }),
        );
      }
    }
    launches.push(createGatherRows(device, { R: 1, C, N: M }, { x, rows: lastRow, out: last }), ...head.launches(1, { x: last, logits }));
    return launches;
  };

  const tokens: number[] = [];
  let busy = false;
  let destroyed = false;

  const extend = async (newTokens: readonly number[]): Promise<Float32Array> => {
    if (destroyed) throw new Error('FamilyDecoder: used after destroy()');
    if (busy) throw new Error('FamilyDecoder: extend while another extend is in flight (a decoder serves one view; await each call)');
    const M = newTokens.length;
    const start = tokens.length;
    checkExtend(start, newTokens, V, capacity, 'FamilyDecoder', "the decoder's");
    busy = true;
    const launches = recordStep(start, M);
    try {
      device.queue.writeBuffer(tokenIds, 0, Uint32Array.from(newTokens));
      device.queue.writeBuffer(
        positionIds,
        0,
        Uint32Array.from({ length: M }, (_, i) => start + i),
      );
      device.queue.writeBuffer(lastRow, 0, Uint32Array.of(M - 1));
      const encoder = device.createCommandEncoder({ label: 'FamilyDecoder.encoder' });
      const pass = encoder.beginComputePass({ label: 'FamilyDecoder.pass' });
      encodeLaunches(pass, launches);
      pass.end();
      encoder.copyBufferToBuffer(logits, 0, staging, 0, V * 4);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(staging.getMappedRange().slice(0));
      staging.unmap();
      for (const token of newTokens) tokens.push(token);
      return out;
    } finally {
      releaseLaunches(launches);
      busy = false;
    }
  };

  const truncate = (n: number) => {
    if (!(Number.isInteger(n) && n >= 0)) throw new Error(`FamilyDecoder.truncate: ${n} is not a row count`);
    if (busy) throw new Error('FamilyDecoder: truncate while an extend is in flight');
    if (n < tokens.length) tokens.length = n;
  };

  return {
    model,
    capacity,
    get length() {
      return tokens.length;
    },
    get tokens() {
      return tokens;
    },
    truncate,
    extend,
    async sync(view) {
      if (view.length === 0) throw new Error('FamilyDecoder.sync: an empty view has no last row');
      if (view.length > capacity) throw new Error(`FamilyDecoder: a live view of ${view.length} tokens is longer than the decoder's ${capacity} positions`);
      const keep = Math.min(commonPrefix(tokens, view), view.length - 1);
      truncate(keep);
      return extend(view.slice(keep));
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      owner.destroy();
    },
  };
}

/** A family model as the harness's `LanguageModel`: one decoder (KV cache) per episode. */
export function familyLanguageModel(model: FamilyGpuModel, options: { capacity?: number } = {}): LanguageModel {
  const c = model.family;
  const capacity = Math.min(c.maxPositionEmbeddings, options.capacity ?? DEFAULT_DECODER_CAPACITY);
  return {
    name: `${c.architecture}(${c.name}, V ${c.vocabSize}, C ${c.hiddenSize}, ${c.nLayer} layers, ${c.nHead}/${c.nKvHead} heads)`,
    vocabSize: c.vocabSize,
    nPositions: capacity,
    createDecoder: () => createFamilyDecoder(model, { capacity }),
  };
}
