// One config for the app build and the two Vitest tiers: `unit` (pure logic, *.test.ts) and
// `gpu` (WGSL kernels on Dawn + SwiftShader in Node, *.gpu.test.ts, a process per file, two files at a time).
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  base: './',
  build: { target: 'es2022', sourcemap: true, chunkSizeWarningLimit: 2000 },
  worker: { format: 'es' },
  server: { host: '127.0.0.1', port: Number(process.env.MW_PORT ?? 5173), strictPort: !!process.env.MW_PORT },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'src/**/*.test.tsx', 'bench/**/*.test.ts'],
          exclude: ['src/**/*.gpu.test.ts', 'node_modules/**'],
          environment: 'node',
          // Two files at a time at least: Vitest's default (cores − 1) is one on a 2-core machine, where many of these
          // files wait on an `mw` subprocess and half the machine sits idle.
          maxWorkers: Math.max(2, availableParallelism() - 1),
          testTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu',
          include: ['src/**/*.gpu.test.ts'],
          environment: 'node',
          pool: 'forks',
          // Two files at a time (a third of the cores on larger machines: each file's SwiftShader uses several): one at a
          // time leaves a core idle while a file compiles its pipelines (one thread) or waits on an `mw` subprocess.
          // Each file has its own process, device and temporary directories; the `mw` subprocesses share only
          // the tests' cache directory, whose matmul choice the global setup settles first.
          maxWorkers: Math.max(2, Math.floor(availableParallelism() / 3)),
          globalSetup: ['src/testing/gpuGlobalSetup.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
