// Binding of attention.wgsl: tree-masked flash attention, forward and backward, and the forward with grouped-query heads up to 128 floats (the model families) (docs/model.md).
// Per batch the caller builds one AttentionMask from `end[]` (block lists + params, uploaded once),
// shared by every layer; createAttentionForward / createAttentionBackward give the layer's launches.
// Reference: attentionRef, attentionBackwardRef in attention.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import kernel from './attention.wgsl?raw';
import type { AdapterSummary } from '../../runtime/device';
import { createStorage, readUint32, uploadStorage, uploadUniform } from '../../runtime/buffers';
import { computePipeline } from '../../runtime/pipeline';
import { bindBuffers, checkLength, encodeLaunches, type Launch } from '../../runtime/kernel';
import { attentionTiles, type AttentionTiles } from './attention-tiles';

/** The row length the shader is written for (`const MAX_HS` in it, read from it): GPT-2's 64, its config limit. */
export const ATTENTION_MAX_HS = Number(/const MAX_HS: u32 = (\d+)u;/.exec(kernel)?.[1]);

/** The longest head the kernel takes: longer than ATTENTION_MAX_HS gets a build with rows of this length (head_dim 128). */
export const ATTENTION_LONG_MAX_HS = 128;

/**
 * The kernel's row helpers (see "Rows" at the end of attention.wgsl), unrolled over the `maxHs / 4`
 * vec4s of a row: line i of each helper touches vec4 i, guarded by `HS > 4i` so that lines past the
 * model's head fold away.
 */
export function attentionRowHelpers(maxHs: number): string {
  const lines = (body: (i: number) => string) => Array.from({ length: maxHs / 4 }, (_, i) => `  if (HS > ${4 * i}u) { ${body(i)} }`).join('\n');
  const load = (name: string, from: string, tile: boolean) =>
    tile
      ? `fn ${name}(j: u32) -> Row {\n  let at = j * HS / 4u;\n  var r: Row;\n${lines((i) => `r[${i}] = ${from}[at + ${i}u];`)}\n  return r;\n}`
      : `fn ${name}(at: u32) -> Row {\n  var r: Row;\n${lines((i) => `r[${i}] = ${from}[at + ${i}u];`)}\n  return r;\n}`;
  return [
    `alias Row = array<vec4f, MAX_HS / 4>;`,
    `// The row of qkv or dOut whose first vec4 is at index \`at\`; row j of a staged tile.`,
    load('qkvRow', 'qkv', false),
    load('dOutRow', 'dOut', false),
    load('tileARow', 'tileA', true),
    load('tileBRow', 'tileB', true),
    `fn dotRow(a: ptr<function, Row>, b: ptr<function, Row>) -> f32 {\n  var s = 0.0;\n${lines((i) => `s += dot((*a)[${i}], (*b)[${i}]);`)}\n  return s;\n}`,
    `// y += a x\nfn axpyRow(y: ptr<function, Row>, a: f32, x: ptr<function, Row>) {\n${lines((i) => `(*y)[${i}] += a * (*x)[${i}];`)}\n}`,
    `fn scaleRow(y: ptr<function, Row>, a: f32) {\n${lines((i) => `(*y)[${i}] *= a;`)}\n}`,
  ].join('\n\n');
}

/**
 * attention.wgsl with its row helpers appended, its rows as long as the head needs: 64 (as written,
 * GPT-2) or 128 (the model families' head_dim 128). Private rows cost registers, so short heads keep short rows.
 */
export function attentionCode(HS: number): string {
  const maxHs = HS <= ATTENTION_MAX_HS ? ATTENTION_MAX_HS : ATTENTION_LONG_MAX_HS;
  const source = maxHs === ATTENTION_MAX_HS ? kernel : kernel.replace(`const MAX_HS: u32 = ${ATTENTION_MAX_HS}u;`, `const MAX_HS: u32 = ${maxHs}u;`);
  return `${source}\n${attentionRowHelpers(maxHs)}\n`;
}

export interface AttentionConfig {
  /** Query rows per tile: invocations per workgroup of forward and backwardQuery. */
  BQ: number;
  /** Key rows per tile: invocations per workgroup of backwardKey. */
  BK: number;
  /** Stage the other side's tile in workgroup memory (real GPUs) instead of reading storage (SwiftShader). */
  shared: boolean;
  /** Count visited tile pairs into mask.visits (tests; one atomic per tile visit). */
  countVisits?: boolean;
}

/**
 * Per adapter. SwiftShader runs a workgroup on one CPU thread, where a barrier is a coroutine switch
 * and storage reads hit the CPU cache: staging measured no faster there (attention.bench.ts) and its
 * pipelines compile ~4x slower, so it reads rows directly, with small tiles that skip more of a tree.
 * A real GPU stages tiles in workgroup memory and wants more rows per workgroup (not yet measured on one).
 */
export function attentionConfig(info: AdapterSummary): AttentionConfig {
  return info.isSoftware ? { BQ: 16, BK: 16, shared: false } : { BQ: 64, BK: 32, shared: true };
}

export interface AttentionShape {
  NH: number; // query heads
  HS: number; // head size, a multiple of 4; C = NH * HS
  /** Key/value heads (grouped-query attention), dividing NH; default NH. qkv rows are (NH + 2·NKV)·HS wide. */
  NKV?: number;
}

/** Floats of one row of qkv: q (NH heads) | k (NKV) | v (NKV). */
export const qkvWidth = ({ NH, HS, NKV = NH }: AttentionShape) => (NH + 2 * NKV) * HS;

/** A batch's visibility on the GPU: `end[]` and its block lists, shared by every layer and both passes. */
export interface AttentionMask {
  N: number;
  config: AttentionConfig;
  /** Rows carry groups (forward only): query i sees key k iff k <= i < end[k] and group[k] = group[i]. */
  grouped: boolean;
  /** Row stride of lse and delta: N, or the N of the forward whose first rows this mask covers. */
  lseStride: number;
  tiles: AttentionTiles;
  buffer: GPUBuffer; // u32: end (N) | group (N, grouped) | keyTilesOfQueryTile offsets, tiles | queryTilesOfKeyTile offsets, tiles
  params: GPUBuffer; // struct Params
  visits: GPUBuffer; // u32 (3): tile pairs visited by forward, backwardQuery, backwardKey (countVisits)
  destroy(): void;
}

/** Where each part of the mask buffer starts: the fields of struct Params after N. */
export interface MaskLayout {
  /** Where group[] starts (0: not grouped). */
  groups: number;
  keyTilesOffsets: number;
  keyTiles: number;
  queryTilesOffsets: number;
  queryTiles: number;
  length: number;
}

export function maskLayout(tiles: AttentionTiles, grouped = false): MaskLayout {
  const groups = grouped ? tiles.N : 0;
  const keyTilesOffsets = tiles.N * (grouped ? 2 : 1);
  const keyTiles = keyTilesOffsets + tiles.queryTiles + 1;
  const queryTilesOffsets = keyTiles + tiles.pairs;
  const queryTiles = queryTilesOffsets + tiles.keyTiles + 1;
  return { groups, keyTilesOffsets, keyTiles, queryTilesOffsets, queryTiles, length: queryTiles + tiles.pairs };
}

/**
 * Mirror of `struct Params` in attention.wgsl (28 bytes, padded to 32): N: u32 @ 0,
 * keyTilesOffsets @ 4, keyTiles @ 8, queryTilesOffsets @ 12, queryTiles @ 16, groups @ 20, lseStride @ 24.
 */
export function attentionParams(N: number, layout: MaskLayout, lseStride = N): ArrayBuffer {
  const bytes = new ArrayBuffer(32);
  const view = new DataView(bytes);
  view.setUint32(0, N, true);
  view.setUint32(4, layout.keyTilesOffsets, true);
  view.setUint32(8, layout.keyTiles, true);
  view.setUint32(12, layout.queryTilesOffsets, true);
  view.setUint32(16, layout.queryTiles, true);
  view.setUint32(20, layout.groups, true);
  view.setUint32(24, lseStride, true);
  return bytes;
}

/** The contents of AttentionMask.buffer. */
export function maskWords(end: ArrayLike<number>, tiles: AttentionTiles, group?: ArrayLike<number>): Uint32Array {
  const layout = maskLayout(tiles, group !== undefined);
  const words = new Uint32Array(layout.length);
  words.set(Array.from(end), 0);
  if (group) words.set(Array.from(group), layout.groups);
  words.set(tiles.keyTilesOfQueryTile.offsets, layout.keyTilesOffsets);
  words.set(tiles.keyTilesOfQueryTile.tiles, layout.keyTiles);
  words.set(tiles.queryTilesOfKeyTile.offsets, layout.queryTilesOffsets);
  words.set(tiles.queryTilesOfKeyTile.tiles, layout.queryTiles);
  return words;
}

export interface MaskOptions {
  /** Per row: its group (see AttentionMask.grouped). The mask serves the forward only. */
  group?: ArrayLike<number>;
  /** For a backward over the first N rows of a forward of lseStride rows (default N). */
  lseStride?: number;
}

export function createAttentionMask(device: GPUDevice, end: ArrayLike<number>, config: AttentionConfig, options: MaskOptions = {}): AttentionMask {
  const N = end.length;
  if (N === 0) throw new Error('createAttentionMask: end[] is empty');
  const { group, lseStride = N } = options;
  if (group && group.length !== N) throw new Error(`createAttentionMask: ${group.length} groups for ${N} rows`);
  if (!Number.isInteger(lseStride) || lseStride < N) throw new Error(`createAttentionMask: lseStride ${lseStride} is below the ${N} rows`);
  const tiles = attentionTiles(end, config.BQ, config.BK, group);
  const maxGroups = device.limits.maxComputeWorkgroupsPerDimension;
  if (Math.max(tiles.queryTiles, tiles.keyTiles) > maxGroups) {
    throw new Error(
      `createAttentionMask: ${N} rows make ${Math.max(tiles.queryTiles, tiles.keyTiles)} tiles, over the ${maxGroups} workgroups of one dispatch`,
    );
  }
  const buffer = uploadStorage(device, 'AttentionMask.buffer', maskWords(end, tiles, group));
  const params = uploadUniform(device, 'AttentionMask.params', attentionParams(N, maskLayout(tiles, group !== undefined), lseStride));
  const visits = createStorage(device, 'AttentionMask.visits', 3 * 4);
  return {
    N,
    config,
    grouped: group !== undefined,
    lseStride,
    tiles,
    buffer,
    params,
    visits,
    destroy() {
      buffer.destroy();
      params.destroy();
      visits.destroy();
    },
  };
}

/** Binding numbers of attention.wgsl's resources (the shader's `@binding`s, in one place here). */
export const ATTENTION_BINDINGS = {
  params: 0,
  mask: 1,
  visits: 2,
  qkv: 3,
  out: 4,
  lse: 5,
  outIn: 6,
  dOut: 7,
  lseIn: 8,
  delta: 9,
  dqkv: 10,
} as const;

type Binding = keyof typeof ATTENTION_BINDINGS;
type EntryPoint = 'forward' | 'backwardQuery' | 'backwardKey';

function launch(
  device: GPUDevice,
  entryPoint: EntryPoint,
  mask: AttentionMask,
  shape: AttentionShape,
  buffers: Partial<Record<Binding, GPUBuffer>>,
  tiles: number,
): Launch {
  const { NH, HS, NKV = NH } = shape;
  const { BQ, BK, shared, countVisits = false } = mask.config;
  const constants = { NH, NKV, HS, BQ, BK, SHARED: Number(shared), COUNT_VISITS: Number(countVisits), GROUPED: Number(mask.grouped) };
  const label = `attention.${entryPoint}`;
  const pipeline = computePipeline(device, label, attentionCode(HS), constants, entryPoint);
  const byNumber: Record<number, GPUBuffer> = {};
  for (const [name, buffer] of Object.entries(buffers)) byNumber[ATTENTION_BINDINGS[name as Binding]] = buffer;
  const group = bindBuffers(device, `${label}.bindGroup`, pipeline, byNumber);
  // The params uniform belongs to the mask (mask.destroy()), not to the launch.
  return { label, pipeline, group, workgroups: [tiles, NH, 1], uniforms: [] };
}

function checkShape({ NH, HS, NKV = NH }: AttentionShape): void {
  if (!Number.isInteger(NH) || NH < 1) throw new Error(`attention: NH must be a positive integer, got ${NH}`);
  if (!Number.isInteger(NKV) || NKV < 1 || NH % NKV !== 0) throw new Error(`attention: ${NKV} key/value heads do not divide ${NH} query heads`);
  if (!Number.isInteger(HS) || HS < 4 || HS > ATTENTION_LONG_MAX_HS || HS % 4 !== 0) {
    throw new Error(`attention: head size ${HS} must be a multiple of 4 in 4..${ATTENTION_LONG_MAX_HS} (rows are read as vec4; attentionCode)`);
  }
}

/** Each buffer must hold at least its tensor's elements (names as in the *Buffers interfaces). */
function checkLengths(buffers: object, lengths: Record<string, number>): void {
  for (const [name, length] of Object.entries(lengths)) checkLength((buffers as Record<string, GPUBuffer>)[name], length, name);
}

export interface AttentionForwardBuffers {
  qkv: GPUBuffer; // (N, (NH + 2·NKV)·HS): (N, 3C) for GPT-2
  out: GPUBuffer; // (N, C), written
  lse: GPUBuffer; // (NH, lseStride), written; -inf for a row that sees no key
}

/** The forward: one dispatch of (queryTiles, NH) workgroups. */
export function createAttentionForward(device: GPUDevice, mask: AttentionMask, shape: AttentionShape, buffers: AttentionForwardBuffers): Launch {
  checkShape(shape);
  const { N } = mask;
  const C = shape.NH * shape.HS;
  checkLengths(buffers, { qkv: N * qkvWidth(shape), out: N * C, lse: shape.NH * mask.lseStride });
  const { qkv, out, lse } = buffers;
  return launch(device, 'forward', mask, shape, { params: mask.params, mask: mask.buffer, visits: mask.visits, qkv, out, lse }, mask.tiles.queryTiles);
}

export interface AttentionBackwardBuffers {
  qkv: GPUBuffer; // (N, 3C), the forward's input
  out: GPUBuffer; // (N, C), the forward's output
  lse: GPUBuffer; // (NH, lseStride), the forward's lse
  dOut: GPUBuffer; // (N, C)
  delta: GPUBuffer; // (NH, lseStride) scratch: rowsum(dOut * out), written by the first launch
  dqkv: GPUBuffer; // (N, 3C), every element written (not accumulated)
}

/** The backward, two launches to encode in this order: backwardQuery (delta, dQ), backwardKey (dK, dV). */
export function createAttentionBackward(device: GPUDevice, mask: AttentionMask, shape: AttentionShape, buffers: AttentionBackwardBuffers): Launch[] {
  checkShape(shape);
  const { N, lseStride } = mask;
  if (mask.grouped) throw new Error('attention backward: a grouped mask serves the forward only');
  if ((shape.NKV ?? shape.NH) !== shape.NH) throw new Error('attention backward: grouped-query attention (NKV < NH) is forward only');
  const C = shape.NH * shape.HS;
  checkLengths(buffers, { qkv: N * 3 * C, out: N * C, lse: shape.NH * lseStride, dOut: N * C, delta: shape.NH * lseStride, dqkv: N * 3 * C });
  const { qkv, out, lse, dOut, delta, dqkv } = buffers;
  const common = { params: mask.params, mask: mask.buffer, visits: mask.visits, qkv, dOut, lseIn: lse, delta, dqkv };
  return [
    launch(device, 'backwardQuery', mask, shape, { ...common, outIn: out }, mask.tiles.queryTiles),
    launch(device, 'backwardKey', mask, shape, common, mask.tiles.keyTiles),
  ];
}

/** Records the forward straight into an open compute pass (createAttentionForward, encoded once). */
export function encodeAttentionForward(
  device: GPUDevice,
  pass: GPUComputePassEncoder,
  mask: AttentionMask,
  shape: AttentionShape,
  buffers: AttentionForwardBuffers,
): void {
  encodeLaunches(pass, [createAttentionForward(device, mask, shape, buffers)]);
}

/** Records the backward's two dispatches, in order, into an open compute pass. */
export function encodeAttentionBackward(
  device: GPUDevice,
  pass: GPUComputePassEncoder,
  mask: AttentionMask,
  shape: AttentionShape,
  buffers: AttentionBackwardBuffers,
): void {
  encodeLaunches(pass, createAttentionBackward(device, mask, shape, buffers));
}

export interface AttentionVisits {
  forward: number;
  backwardQuery: number;
  backwardKey: number;
}

/** Tile pairs visited since the mask was created (only counted with config.countVisits). */
export async function readAttentionVisits(device: GPUDevice, mask: AttentionMask): Promise<AttentionVisits> {
  const [forward, backwardQuery, backwardKey] = await readUint32(device, mask.visits, 3);
  return { forward, backwardQuery, backwardKey };
}

/**
 * `config` with tiles small enough that the staged tiles of a head of HS floats fit the device's
 * workgroup memory (SHARED only: two (max(BQ, BK), HS) tiles and two BQ rows of lse and delta):
 * head_dim 128 halves GPU tiles of 64 rows.
 */
export function fitAttentionConfig(config: AttentionConfig, HS: number, device: GPUDevice): AttentionConfig {
  if (!config.shared) return config;
  const bytes = (c: AttentionConfig) => 2 * Math.max(c.BQ, c.BK) * HS * 4 + 2 * c.BQ * 4;
  let fitted = config;
  while (bytes(fitted) > device.limits.maxComputeWorkgroupStorageSize && Math.max(fitted.BQ, fitted.BK) > 4) {
    fitted = { ...fitted, BQ: Math.max(4, fitted.BQ / 2), BK: Math.max(4, fitted.BK / 2) };
  }
  return fitted;
}
