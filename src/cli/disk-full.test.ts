// A full disk is an input/output problem, not a bug: one line naming the file, exit 2, nothing left
// behind, and a checkpoint pair that was on disk before the failed save loads as it was. The disk is
// a real 2 MiB tmpfs where this process may mount one (root), else a simulated ENOSPC from the write
// hook of src/util/output-file.ts; each test's name says which one ran.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { saveCheckpointPair, type OptimizerState } from '../model/checkpoint';
import { optimizerStatePath, readCheckpointPair, writeCheckpointPair } from '../model/checkpoint-file';
import type { ModelConfig } from '../model/config';
import { initWeights, parameterShapes } from '../model/params';
import { generateRandomRollout } from '../rollout/generate-random';
import { OutputIOError, setWriteFaultForTests } from '../util/output-file';
import { main } from './main';

const TMP = mkdtempSync(join(tmpdir(), 'mw-diskfull-'));
const DISK = join(TMP, 'disk');
mkdirSync(DISK);

/** 2 MiB of tmpfs at DISK when mount is permitted; otherwise every write through output-file.ts past 2 MiB fails with ENOSPC. */
const HOW: 'tmpfs' | 'simulated' = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', DISK]).status === 0 ? 'tmpfs' : 'simulated';
let written = 0;
function simulate(on: boolean) {
  if (HOW === 'tmpfs') return;
  written = 0;
  setWriteFaultForTests(
    on
      ? (_file, bytes) => {
          written += bytes;
          if (written > 2 << 20) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
        }
      : null,
  );
}
afterAll(() => {
  setWriteFaultForTests(null);
  if (HOW === 'tmpfs') spawnSync('umount', [DISK]);
  rmSync(TMP, { recursive: true, force: true });
});

async function mw(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** About 0.5 MB of weights and twice that of AdamW state: one pair fits the 2 MiB disk, two do not. */
const CONFIG: ModelConfig = { vocabSize: 272, nEmbd: 64, nLayer: 2, nHead: 2, nPositions: 64 };

function state(step: number, fill: number): OptimizerState {
  const m = new Map<string, Float32Array>();
  const v = new Map<string, Float32Array>();
  for (const { name, shape } of parameterShapes(CONFIG)) {
    const n = shape.reduce((a, b) => a * b, 1);
    m.set(name, new Float32Array(n).fill(fill));
    v.set(name, new Float32Array(n).fill(fill * fill));
  }
  return { step, m, v };
}

describe(`a full disk (${HOW === 'tmpfs' ? 'a real 2 MiB tmpfs' : 'simulated ENOSPC: mount not permitted here'})`, () => {
  it(`mw export onto it: exit 2, one line naming OUT, nothing left on it (${HOW})`, async () => {
    const set = join(TMP, 'set.jsonl');
    // ~2.5 MB of batch: more than the disk holds.
    const base = generateRandomRollout({ seed: 3, size: 'small', id: 'x' });
    writeFileSync(set, `${Array.from({ length: 2000 }, (_, i) => JSON.stringify({ ...base, id: `d${i}` })).join('\n')}\n`);
    const out = join(DISK, 'batch.safetensors');
    simulate(true);
    try {
      const run = await mw('export', set, '--method', 'packed-4d', '--out', out);
      expect(run).toEqual({ code: 2, stdout: '', stderr: `${out}: cannot write: no space left on device (ENOSPC)\n` });
    } finally {
      simulate(false);
    }
    const left = readdirSync(DISK);
    for (const f of left) rmSync(join(DISK, f));
    expect(left).toEqual([]);
  });

  it(`a checkpoint save that runs out of space: OutputIOError naming the file (mw train's exit 2), the old pair intact (${HOW})`, () => {
    const path = join(DISK, 'run.safetensors');
    const old = saveCheckpointPair(initWeights(CONFIG, 1), state(4, 0.1), { seed: '0' });
    writeCheckpointPair(path, old);
    const next = saveCheckpointPair(initWeights(CONFIG, 2), state(5, 0.2), { seed: '0' });
    simulate(true);
    written = old.weights.length + old.optimizer.length; // the simulated disk holds the old pair already
    let error: unknown;
    try {
      writeCheckpointPair(path, next);
    } catch (e) {
      error = e;
    } finally {
      simulate(false);
    }
    expect(error).toBeInstanceOf(OutputIOError);
    const named = [path, optimizerStatePath(path)].map((f) => `${f}: cannot write: no space left on device (ENOSPC)`);
    expect(named).toContain((error as Error).message);
    expect(readdirSync(DISK).sort()).toEqual(['run.optim.safetensors', 'run.safetensors']);
    expect(readFileSync(path).equals(old.weights)).toBe(true);
    expect(readFileSync(optimizerStatePath(path)).equals(old.optimizer)).toBe(true);
    expect(readCheckpointPair(path).optimizer?.step).toBe(4);
    rmSync(path);
    rmSync(optimizerStatePath(path));
  });
});
