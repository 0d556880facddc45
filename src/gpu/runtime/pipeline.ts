// Compute pipelines, created once per (device, shader, constants) and cached. Tile and workgroup
// sizes are WGSL `override` constants set here, so no magic number lives twice.

export type Constants = Record<string, number>;

const cache = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

export function computePipeline(device: GPUDevice, label: string, code: string, constants: Constants = {}, entryPoint = 'main'): GPUComputePipeline {
  let perDevice = cache.get(device);
  if (!perDevice) cache.set(device, (perDevice = new Map()));
  const key = `${label}\u0000${entryPoint}\u0000${JSON.stringify(constants)}\u0000${code}`;
  let pipeline = perDevice.get(key);
  if (!pipeline) {
    const module = device.createShaderModule({ label: `${label}.module`, code });
    pipeline = device.createComputePipeline({
      label: `${label}.pipeline`,
      layout: 'auto',
      compute: { module, entryPoint, constants },
    });
    perDevice.set(key, pipeline);
  }
  return pipeline;
}

/** Records one dispatch into an open compute pass. */
export function dispatch(pass: GPUComputePassEncoder, pipeline: GPUComputePipeline, group: GPUBindGroup, x: number, y = 1, z = 1): void {
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, group);
  pass.dispatchWorkgroups(x, y, z);
}

/** Workgroup counts for `n` items with `perGroup` items each, split over y when x would exceed the limit. */
export function groups1d(n: number, perGroup: number, maxPerDim = 65535): [number, number] {
  const total = Math.max(1, Math.ceil(n / perGroup));
  if (total <= maxPerDim) return [total, 1];
  const y = Math.ceil(total / maxPerDim);
  return [Math.ceil(total / y), y];
}
