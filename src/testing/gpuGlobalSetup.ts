// The GPU tier's global setup (vite.config.ts), run once before its files, which run two at a time: the
// matmul variant every `mw` subprocess of the tier reads from the tests' cache directory is settled
// here by the CLI's own settleMatmulVariant over the tests' cache directory ($MW_CACHE_DIR), so no two files' first
// subprocesses measure at once and pick different variants: the blocked variants give the same bits
// and the tiled one does not, and files compare losses across processes bit for bit.
// It runs in a subprocess of its own: createGpu lowers the priority of the thread that calls it (see
// lowerMainThreadPriority in src/gpu/runtime/device.ts), which must not be Vitest's own.

import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { settleMatmulVariant } from '../cli/model-args';
import { ROOT, TEST_CACHE_DIR } from '../cli/subprocess.testing';
import { pickMatmulVariant } from '../gpu/kernels/matmul/matmul-autotune';
import { createGpu } from '../gpu/runtime/device';

const SELF = fileURLToPath(import.meta.url);

export default function setup(): void {
  try {
    execFileSync(process.execPath, ['--import', './scripts/register.mjs', SELF], { cwd: ROOT, stdio: ['ignore', 'inherit', 'pipe'] });
  } catch (error) {
    // No GPU here, say: one line, and each file reports what it meets in its own words.
    const stderr = String((error as { stderr?: unknown }).stderr ?? error).trim();
    console.log(`gpu tier: the matmul variant was not settled before the files (${stderr.split('\n').at(-1)})`);
  }
}

/** The variant the tier's `mw` subprocesses will read: the CLI's choice in their cache directory. */
async function settleTestVariant(): Promise<void> {
  process.env.XDG_RUNTIME_DIR ??= tmpdir();
  process.env.MW_CACHE_DIR = TEST_CACHE_DIR;
  const gpu = await createGpu();
  try {
    await settleMatmulVariant(gpu, pickMatmulVariant);
  } finally {
    gpu.destroy();
  }
}

if (process.argv[1] === SELF) {
  await settleTestVariant().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
