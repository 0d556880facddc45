// One writer per checkpoint name: `mw train` takes CKPT.lock (its pid) before it reads anything, so
// a second run on the same --ckpt-out refuses at start in one line naming the first one's pid; a lock
// left by a process that is no longer running (a SIGKILLed run) is taken over.

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OutputRefusedError, isRunning, lockOutput } from '../util/output-file';
import { main } from './main';

const TMP = mkdtempSync(join(tmpdir(), 'mw-lock-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

async function mw(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

/** A short-lived process that holds `lock` (its pid written in it, as mw train writes it) until killed. */
async function holder(lock: string) {
  const child = spawn(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(lock)}, process.pid + '\\n'); setInterval(() => {}, 1000)`]);
  // Until its pid is written whole (the file exists, empty, a moment before: a lock read then is unreadable and taken over).
  const written = () => existsSync(lock) && readFileSync(lock, 'utf8') === `${child.pid}\n`;
  for (let i = 0; i < 2000 && !written(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(written()).toBe(true);
  return child;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => child.on('exit', r));
  expect(isRunning(child.pid!)).toBe(false);
  return child.pid!;
}

function train(data: string, ckpt: string) {
  return mw(
    'train',
    '--data',
    data,
    '--method',
    'packed-4d',
    '--objective',
    'sft',
    '--steps',
    '1',
    '--config',
    'tiny',
    '--ckpt-out',
    ckpt,
    '--metrics',
    join(TMP, 'm.jsonl'),
  );
}

describe('mw train: one writer per --ckpt-out', () => {
  it("a second writer refuses at start (exit 1), naming the holder's pid; the holder's lock is left alone", async () => {
    const ckpt = join(TMP, 'held.safetensors');
    const lock = `${ckpt}.lock`;
    const first = await holder(lock);
    try {
      const run = await train(join(TMP, 'no-such-data.jsonl'), ckpt);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `mw train: ${ckpt} is being written by another mw train (pid ${first.pid}, lock file held.safetensors.lock); wait for it to finish or choose another name\n`,
      });
      expect(readFileSync(lock, 'utf8')).toBe(`${first.pid}\n`);
    } finally {
      first.kill('SIGKILL');
    }
  });

  it('a lock of a process that is no longer running is taken over, and released when the run ends', async () => {
    const ckpt = join(TMP, 'stale.safetensors');
    const lock = `${ckpt}.lock`;
    writeFileSync(lock, `${await deadPid()}\n`);
    // The run gets past the lock: it stops at its data (exit 2), which it reads only once it holds the lock.
    const run = await train(join(TMP, 'no-such-data.jsonl'), ckpt);
    expect(run).toEqual({ code: 2, stdout: '', stderr: `${join(TMP, 'no-such-data.jsonl')}: no such file\n` });
    expect(existsSync(lock)).toBe(false);
    expect(readdirSync(TMP).filter((f) => f.startsWith('stale'))).toEqual([]);
  });

  it('lockOutput: refuses a live holder, takes over a dead one or an unreadable lock, and releases only its own', async () => {
    const name = join(TMP, 'direct.safetensors');
    const lock = `${name}.lock`;
    writeFileSync(lock, 'garbage'); // a writer that died before writing its pid
    const release = lockOutput(name);
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
    release();
    expect(existsSync(lock)).toBe(false);
    const other = await holder(lock);
    try {
      expect(() => lockOutput(name)).toThrow(OutputRefusedError);
      expect(() => lockOutput(name)).toThrow(`(pid ${other.pid}, lock file direct.safetensors.lock)`);
    } finally {
      other.kill('SIGKILL');
      await new Promise((r) => other.on('exit', r));
    }
    const again = lockOutput(name); // its holder is gone now
    expect(readFileSync(lock, 'utf8')).toBe(`${process.pid}\n`);
    again();
  });
});
