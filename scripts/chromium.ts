// Debian's headless Chromium as every browser run here launches it: the Playwright config (e2e),
// the benchmarks (bench/) and the scripts (screenshots). WebGPU on SwiftShader; nothing that
// reaches off the machine (no background networking, component updates, sync or QUIC).

/** Debian's chromium package (scripts/ensure-chromium.mjs installs it); never a downloaded browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--enable-unsafe-webgpu',
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];
