// Debian's headless Chromium as every browser run here launches it: the Playwright config (e2e),
// the benchmarks (bench/) and the scripts (screenshots). WebGPU on SwiftShader; nothing that
// reaches off the machine (no background networking, component updates, sync or QUIC).

/** Debian's chromium package (scripts/ensure-chromium.mjs installs it); never a downloaded browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

// Dawn zeroes workgroup memory with Tint's loop rather than the Vulkan extension, as in Node (DAWN_NODE_FLAGS in
// src/gpu/runtime/device.ts): the same zeros, but SwiftShader compiles the extension's initializer slowly (AdamW's
// reduction: ~500 ms a pipeline with it, ~80 ms without, measured in this Chromium).
export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];
