// A reader that closes the pipe early (`mw tree --per-target --json | head -c 600`) stops mw
// quietly: no stack trace on stderr, whatever the command was still writing.

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../rollout/generate-random';
import { ROOT, tmpDir } from './subprocess.testing';

function readThenClose(args: string[], bytes: number): Promise<{ read: string; stderr: string; code: number | null }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/mw.js', ...args], { cwd: ROOT });
    let read = '';
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.stdout.on('data', (chunk) => {
      read += chunk;
      if (read.length >= bytes) child.stdout.destroy();
    });
    child.on('close', (code) => resolve({ read, stderr, code }));
  });
}

describe('a closed stdout', () => {
  it('ends mw tree --per-target --json without a stack trace', async () => {
    // 50 small random rollouts: ~70 kB of rows, more than one pipe buffer holds.
    const file = join(tmpDir('pipe'), 'set.jsonl');
    writeFileSync(file, Array.from({ length: 50 }, (_, i) => JSON.stringify(generateRandomRollout({ seed: i, size: 'small', id: `r${i}` }))).join('\n') + '\n');
    const run = await readThenClose(['tree', file, '--per-target', '--json'], 600);
    expect(run.read.length).toBeGreaterThanOrEqual(600);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
  });
});
