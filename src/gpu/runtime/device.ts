// GPU access in one place: createGpu() returns an adapter and a device, in the browser through
// navigator.gpu and in Node through Dawn's bindings (the `webgpu` package) on SwiftShader's Vulkan
// driver. Failures are a typed GpuUnavailableError; device loss and uncaptured errors are typed events.

export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export type GpuUnavailableReason =
  | 'no-webgpu' // the runtime has no WebGPU at all
  | 'no-driver' // Node: SwiftShader's Vulkan driver or the Vulkan loader is missing
  | 'no-adapter' // WebGPU exists but offered no adapter
  | 'device-failed'; // the adapter refused to create a device

export class GpuUnavailableError extends Error {
  override readonly name = 'GpuUnavailableError';
  constructor(
    readonly reason: GpuUnavailableReason,
    message: string,
  ) {
    super(message);
  }
}

export type GpuEvent =
  | { type: 'device-lost'; reason: 'destroyed' | 'unknown'; message: string }
  | { type: 'uncaptured-error'; kind: 'validation' | 'out-of-memory' | 'internal'; message: string };

export interface AdapterSummary {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** True for CPU implementations (SwiftShader), where kernels prefer no shared memory. */
  isSoftware: boolean;
}

export interface Gpu {
  adapter: GPUAdapter;
  device: GPUDevice;
  info: AdapterSummary;
  /** Subscribe to device loss and uncaptured errors; returns an unsubscribe function. */
  onEvent(listener: (event: GpuEvent) => void): () => void;
  /** Resolves once when the device is lost (also after destroy()). */
  lost: Promise<GpuEvent & { type: 'device-lost' }>;
  destroy(): void;
}

export interface CreateGpuOptions {
  powerPreference?: GPUPowerPreference;
  /** Limits to request above the defaults, clamped to what the adapter supports. */
  requiredLimits?: Partial<Record<keyof GPUSupportedLimits, number>>;
  /** Node only: where SwiftShader's Vulkan driver manifest is (default SWIFTSHADER_ICD). */
  swiftshaderIcd?: string;
}

const isNode = typeof process !== 'undefined' && !!process.versions?.node && typeof window === 'undefined';

export async function createGpu(options: CreateGpuOptions = {}): Promise<Gpu> {
  const gpu = isNode ? await nodeGpu(options.swiftshaderIcd) : browserGpu();
  let adapter: GPUAdapter | null = null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? 'high-performance' });
  } catch (err) {
    throw new GpuUnavailableError('no-adapter', `WebGPU adapter request failed: ${String(err)}`);
  }
  if (!adapter) {
    throw new GpuUnavailableError(
      'no-adapter',
      isNode
        ? "WebGPU offered no adapter: Vulkan found no driver. Install Debian's packages: apt-get install -y chromium libvulkan1"
        : 'WebGPU is present but offered no adapter (blocklisted GPU or disabled hardware acceleration).',
    );
  }
  const requiredLimits: Record<string, number> = {};
  // Large storage buffers and workgroups are what the model needs; ask for what the adapter has.
  for (const name of [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeWorkgroupStorageSize',
    'maxComputeInvocationsPerWorkgroup',
    'maxComputeWorkgroupSizeX',
    'maxStorageBuffersPerShaderStage',
  ] as const) {
    requiredLimits[name] = adapter.limits[name];
  }
  for (const [name, value] of Object.entries(options.requiredLimits ?? {})) {
    const supported = (adapter.limits as unknown as Record<string, number>)[name];
    if (value !== undefined && supported !== undefined) requiredLimits[name] = Math.min(value, supported);
  }
  // shader-f16 lets the kernels load F16 weights natively (kernels/weight-format); without it they unpack.
  const requiredFeatures = (['timestamp-query', 'shader-f16'] as const).filter((f) => adapter.features.has(f));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ label: 'Gpu.device', requiredLimits, requiredFeatures });
  } catch (err) {
    throw new GpuUnavailableError('device-failed', `WebGPU device request failed: ${String(err)}`);
  }
  const info = summarize(adapter.info);
  if (isNode && info.isSoftware) await lowerMainThreadPriority();

  const listeners = new Set<(event: GpuEvent) => void>();
  const emit = (event: GpuEvent) => listeners.forEach((listener) => listener(event));
  device.addEventListener('uncapturederror', (ev) => {
    const error = (ev as GPUUncapturedErrorEvent).error;
    const kind = error instanceof GPUOutOfMemoryError ? 'out-of-memory' : error instanceof GPUValidationError ? 'validation' : 'internal';
    emit({ type: 'uncaptured-error', kind, message: error.message });
  });
  const lost = device.lost.then((lostInfo) => {
    const event = {
      type: 'device-lost' as const,
      reason: lostInfo.reason === 'destroyed' ? ('destroyed' as const) : ('unknown' as const),
      message: lostInfo.message,
    };
    emit(event);
    return event;
  });
  return {
    adapter,
    device,
    info,
    lost,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    destroy: () => device.destroy(),
  };
}

/**
 * The `GPU` object createGpu asks for its adapter (navigator.gpu, or Dawn's in Node), for libraries
 * that look for navigator.gpu themselves (TensorFlow.js in src/gpu/kernels/matmul/matmul.bench.ts).
 */
export async function gpuEntryPoint(): Promise<GPU> {
  return isNode ? nodeGpu() : browserGpu();
}

function browserGpu(): GPU {
  if (typeof navigator === 'undefined' || !('gpu' in navigator) || !navigator.gpu) {
    throw new GpuUnavailableError(
      'no-webgpu',
      'This browser has no WebGPU (navigator.gpu is missing). Use a recent Chromium; on Linux start it with --enable-unsafe-webgpu.',
    );
  }
  return navigator.gpu;
}

let nodeGpuInstance: GPU | undefined;

/** Dawn in Node. VK_ICD_FILENAMES must be set before Dawn loads, so `webgpu` is imported late. */
async function nodeGpu(icd?: string): Promise<GPU> {
  if (nodeGpuInstance && !icd) return nodeGpuInstance;
  const fsName = 'node:fs';
  const fs = (await import(/* @vite-ignore */ fsName)) as typeof import('node:fs');
  if (!process.env.VK_ICD_FILENAMES || icd) {
    const path = icd ?? SWIFTSHADER_ICD;
    if (!fs.existsSync(path)) {
      throw new GpuUnavailableError(
        'no-driver',
        `SwiftShader's Vulkan driver (${path}) is missing. Install Debian's chromium package: apt-get update && apt-get install -y chromium libvulkan1`,
      );
    }
    process.env.VK_ICD_FILENAMES = path;
  }
  const webgpuName = 'webgpu';
  let dawn: { create(flags: string[]): GPU; globals: Record<string, unknown> };
  try {
    dawn = (await import(/* @vite-ignore */ webgpuName)) as typeof dawn;
  } catch (err) {
    throw new GpuUnavailableError('no-webgpu', `Dawn's Node bindings (the webgpu package) failed to load: ${String(err)}`);
  }
  // GPUBufferUsage, GPUMapMode, error classes... as in a browser.
  for (const [name, value] of Object.entries(dawn.globals)) {
    if (!(name in globalThis)) (globalThis as Record<string, unknown>)[name] = value;
  }
  nodeGpuInstance = dawn.create([...DAWN_NODE_FLAGS]);
  return nodeGpuInstance;
}

/**
 * Dawn's options for the Node instance. Workgroup memory is zeroed by Tint's own loop, not by the Vulkan
 * extension VK_KHR_zero_initialize_workgroup_memory: the same zeros (WGSL requires them either way), but
 * SwiftShader compiles the extension's initializer slowly, in proportion to the workgroup size:
 * AdamW's two reductions (256 invocations, two arrays each) took 0.55–0.75 s of a tiny `mw train`'s
 * 2.2 s of pipeline compilation, ~65 ms with the loop. Playwright's Chromium gets the same switch
 * (scripts/chromium.ts).
 */
const DAWN_NODE_FLAGS = ['disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension'] as const;

/**
 * Dawn busy-polls the main thread while a promise waits on the GPU, taking CPU from SwiftShader's
 * worker threads; at the lowest priority it yields to them (measured ~1.6x faster kernels).
 * On Linux setpriority(pid) changes only the calling (main) thread.
 */
async function lowerMainThreadPriority(): Promise<void> {
  const osName = 'node:os';
  try {
    const os = (await import(/* @vite-ignore */ osName)) as typeof import('node:os');
    os.setPriority(process.pid, 19);
  } catch {
    // Not permitted: only slower, never wrong.
  }
}

export function summarize(info: GPUAdapterInfo): AdapterSummary {
  const vendor = info.vendor || 'unknown';
  const architecture = info.architecture || '';
  const device = info.device || '';
  const description = info.description || '';
  const text = `${vendor} ${architecture} ${device} ${description}`.toLowerCase();
  return { vendor, architecture, device, description, isSoftware: /swiftshader|llvmpipe|lavapipe|software|cpu/.test(text) };
}

/** One line for people: "google / swiftshader". */
export function adapterLine(info: AdapterSummary): string {
  return [info.vendor, info.architecture || info.device || info.description].filter(Boolean).join(' / ');
}
