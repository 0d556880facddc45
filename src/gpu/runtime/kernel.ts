// A kernel launch recorded once and encoded into any compute pass as often as needed: pipeline,
// bind group (with its own uniform buffer) and workgroup counts. Each binding's createX builds its
// launches; the engine builds those of a step shape once and replays them with encodeLaunches.

import { dispatch } from './pipeline';

export interface Launch {
  label: string;
  pipeline: GPUComputePipeline;
  group: GPUBindGroup;
  workgroups: [number, number, number];
  /** Uniform buffers owned by this launch (released by `releaseLaunches`). */
  uniforms: GPUBuffer[];
}

/** Records the launches, in order, into an open compute pass (one pass orders them as dispatches). */
export function encodeLaunches(pass: GPUComputePassEncoder, launches: readonly Launch[]): void {
  for (const l of launches) dispatch(pass, l.pipeline, l.group, ...l.workgroups);
}

/** Destroys the uniform buffers of launches that will not be encoded again (after their last submit). */
export function releaseLaunches(launches: readonly Launch[]): void {
  for (const l of launches) for (const u of l.uniforms) u.destroy();
}

/**
 * A whole buffer, or a 256-byte-aligned range of one: the model's parameters and gradients live
 * in one flat buffer each, and every tensor binds as its own range.
 */
export type BufferRef = GPUBuffer | GPUBufferBinding;

function isBinding(ref: BufferRef): ref is GPUBufferBinding {
  return 'buffer' in ref && !('mapState' in ref);
}

/** Bytes a binding of `ref` covers. */
export function refBytes(ref: BufferRef): number {
  if (!isBinding(ref)) return ref.size;
  return ref.size ?? ref.buffer.size - (ref.offset ?? 0);
}

export function refLabel(ref: BufferRef): string {
  return isBinding(ref) ? `${ref.buffer.label}@${ref.offset ?? 0}` : ref.label;
}

/** A bind group for group 0 from explicit binding numbers (entry points of one shader use subsets). */
export function bindBuffers(device: GPUDevice, label: string, pipeline: GPUComputePipeline, buffers: Record<number, BufferRef>): GPUBindGroup {
  return device.createBindGroup({
    label,
    layout: pipeline.getBindGroupLayout(0),
    entries: Object.entries(buffers).map(([binding, ref]) => ({ binding: Number(binding), resource: isBinding(ref) ? ref : { buffer: ref } })),
  });
}

/** Throws a readable error when `ref` holds fewer than `count` 4-byte elements (f32 or u32). */
export function checkLength(ref: BufferRef, count: number, name: string): void {
  const bytes = refBytes(ref);
  if (bytes < count * 4) {
    throw new Error(`${refLabel(ref) || name}: ${bytes} bytes, the kernel reads ${count} elements (${count * 4} bytes) as ${name}`);
  }
}

const unused = new WeakMap<GPUDevice, { read: GPUBuffer; write: GPUBuffer }>();

/**
 * A 16-byte buffer for a binding that the chosen `override` flags never touch (WGSL's auto layout
 * keeps every binding the entry point names). Read and write slots get distinct buffers, since one
 * buffer may not be bound read-only and writable in the same dispatch.
 */
export function unusedBinding(device: GPUDevice, access: 'read' | 'write'): GPUBuffer {
  let pair = unused.get(device);
  if (!pair) {
    const usage = GPUBufferUsage.STORAGE;
    pair = {
      read: device.createBuffer({ label: 'Kernel.unusedRead', size: 16, usage }),
      write: device.createBuffer({ label: 'Kernel.unusedWrite', size: 16, usage }),
    };
    unused.set(device, pair);
  }
  return pair[access];
}

/**
 * Inverse of an index array, as CSR: the positions i with indices[i] === v are
 * order[start[v] .. start[v + 1]), ascending. Lets a backward kernel give each output row one
 * invocation that gathers its contributions (no float atomics in WGSL). Counting sort, O(n + count).
 */
export function inverseIndex(indices: ArrayLike<number>, count: number): { order: Uint32Array; start: Uint32Array } {
  const start = new Uint32Array(count + 1);
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i];
    if (!(v >= 0 && v < count && Number.isInteger(v))) throw new Error(`inverseIndex: index ${v} at ${i} is outside [0, ${count})`);
    start[v + 1]++;
  }
  for (let v = 0; v < count; v++) start[v + 1] += start[v];
  const next = start.slice(0, count);
  const order = new Uint32Array(indices.length);
  for (let i = 0; i < indices.length; i++) order[next[indices[i]]++] = i;
  return { order, start };
}

/** Encodes the launches into one compute pass of a fresh encoder and submits it. */
export function submitLaunches(device: GPUDevice, label: string, launches: readonly Launch[]): void {
  const encoder = device.createCommandEncoder({ label: `${label}.encoder` });
  const pass = encoder.beginComputePass({ label: `${label}.pass` });
  encodeLaunches(pass, launches);
  pass.end();
  device.queue.submit([encoder.finish()]);
}

/**
 * Builds launches and submits them in one pass inside a validation error scope, and throws the
 * first validation error (a binding the auto layout dropped, a buffer too small...) instead of
 * letting the device report it asynchronously. For tests and debugging.
 */
export async function submitValidated(device: GPUDevice, label: string, build: () => Launch[]): Promise<Launch[]> {
  device.pushErrorScope('validation');
  let launches: Launch[] = [];
  let failed: { error: unknown } | undefined;
  try {
    launches = build();
    submitLaunches(device, label, launches);
  } catch (error) {
    failed = { error };
  }
  // The scope is always popped; a validation error names the cause better than what it made throw.
  const error = await device.popErrorScope();
  if (error) throw new Error(`${label}: WebGPU validation error: ${error.message}`);
  if (failed) throw failed.error;
  return launches;
}
