// Kill during save: a child process saves checkpoint pairs in a loop and is SIGKILLed at 20 random
// moments. After every kill the pair on disk must load as a matching pair (weights and optimizer
// state of one save: ln_f.bias[0] equals the step), and the next save leaves no `.partial` behind.
// The child is bundled once (esbuild, as scripts/cli-bundle.mjs does for mw), so each of the 20 starts
// skips the TypeScript transform (~2 s of a loaded runner's time a start).

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../util/prng';
import { readCheckpointPair, writeCheckpointPair } from './checkpoint-file';
import { saveCheckpointPair } from './checkpoint';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = join(mkdtempSync(join(tmpdir(), 'mw-save-loop-')), 'save-loop.mjs');

beforeAll(async () => {
  const entry = fileURLToPath(new URL('./save-loop.testing.ts', import.meta.url));
  await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: CHILD, logLevel: 'error' });
});

/** Starts the save loop at `from`, waits for its first complete save, kills it `delayMs` later. */
function saveAndKill(path: string, from: number, delayMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, path, String(from)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), delayMs));
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`save loop exited ${code}: ${stderr}`))));
  });
}

describe('kill during save', () => {
  it('leaves a matching pair after each of 20 kills, and no .partial after the next save', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-kill-'));
    const path = join(dir, 'run.safetensors');
    const rng = createRng(20);
    let step = 0;
    let recovered = 0;
    const steps: number[] = [];
    for (let trial = 0; trial < 20; trial++) {
      await saveAndKill(path, step, rng.int(400));
      const pair = readCheckpointPair(path);
      const weightsStep = pair.weights.tensors.get('ln_f.bias')![0];
      expect(pair.optimizer, `trial ${trial}`).not.toBeNull();
      expect(pair.optimizer!.step, `trial ${trial}: optimizer and weights from one save`).toBe(weightsStep);
      expect(weightsStep).toBeGreaterThanOrEqual(step);
      if (pair.recovered) recovered++;
      steps.push(weightsStep);
      // The next save (here, in this process) cleans whatever the killed one left.
      step = weightsStep + 1;
      pair.weights.tensors.get('ln_f.bias')![0] = step;
      writeCheckpointPair(path, saveCheckpointPair(pair.weights, { ...pair.optimizer!, step }));
      expect(
        readdirSync(dir).filter((f) => f.endsWith('.partial')),
        `trial ${trial}`,
      ).toEqual([]);
      expect(readCheckpointPair(path).optimizer!.step).toBe(step);
      step++;
    }
    console.log(`kill during save: 20 kills, last steps ${steps.join(' ')}, ${recovered} rolled forward`);
  }, 120_000);
});
