// For the tests of the model-facing commands: run `node bin/mw.js ...` as a user runs it (or its bundle, MW_ENTRY), and write
// small checkpoints and rollout files (tiny model, worked example plus two small random rollouts).

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { saveCheckpoint } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import { generateRandomRollout } from '../rollout/generate-random';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WORKED = fileURLToPath(new URL('../../fixtures/worked-example.json', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The tests' cache directory (the matmul autotune's choice), shared by every run on this machine, never the user's. */
export const TEST_CACHE_DIR = join(tmpdir(), 'mw-test-cache');

/** What runs `mw`: the bundle `npm test` builds (scripts/cli-bundle.mjs, same main) when it names one, else bin/mw.js. */
export const MW_ENTRY = process.env.MW_CLI || 'bin/mw.js';

export function mw(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MW_ENTRY, ...args],
      { cwd: ROOT, maxBuffer: 1 << 26, env: { ...process.env, MW_CACHE_DIR: TEST_CACHE_DIR, ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

export function tmpDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `mw-${name}-`));
}

export function writeCheckpoint(path: string, weights: ModelWeights): string {
  writeFileSync(path, saveCheckpoint(weights));
  return path;
}

/** The worked example as one JSON line. */
export function workedLine(): string {
  return JSON.stringify(JSON.parse(readFileSync(WORKED, 'utf8')));
}

/** JSONL: the worked example and two small random rollouts (ids r301, r302), 37 targets together. */
export function writeSmallDataset(path: string): string {
  const random = [301, 302].map((seed) => JSON.stringify(generateRandomRollout({ seed, size: 'small', id: `r${seed}` })));
  writeFileSync(path, [workedLine(), ...random].join('\n') + '\n');
  return path;
}
