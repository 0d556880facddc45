// Outputs only ever replace a regular file that is not an input (docs/reliability.md): `--out` (and
// `--ckpt-out`, `--metrics`) naming a character device, a named pipe, a folder, or the input under
// another name (a symbolic link, a hard link) is refused in one line, exit 1, and left as it was; a
// killed export leaves no `.partial`; a second `mw train` on one checkpoint refuses at start.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../rollout/generate-random';
import { fixturePath } from '../testing/fixtures';
import { main } from './main';
import { ROOT } from './subprocess.testing';

const TMP = mkdtempSync(join(tmpdir(), 'mw-outputs-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

async function mw(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { out: (t) => void (stdout += t), err: (t) => void (stderr += t) });
  return { code, stdout, stderr };
}

const WORKED = fixturePath('worked-example.json');

/** A copy of the worked example in `dir` (the input the outputs below must not replace). */
function input(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'in.json');
  writeFileSync(path, readFileSync(WORKED));
  return path;
}

/** A character device made for the test (the null device's numbers), or null where mknod is not allowed. */
function makeDevice(path: string): string | null {
  const made = spawnSync('mknod', [path, 'c', '1', '3']);
  return made.status === 0 && lstatSync(path, { throwIfNoEntry: false })?.isCharacterDevice() ? path : null;
}

function fingerprint(path: string) {
  const s = lstatSync(path);
  return { mode: s.mode, ino: s.ino, size: s.size, kind: s.isFile() ? 'file' : s.isSymbolicLink() ? 'link' : s.isDirectory() ? 'dir' : 'special' };
}

const CAN_MKNOD = (() => {
  const probe = join(TMP, 'probe-device');
  const ok = makeDevice(probe) !== null;
  rmSync(probe, { force: true });
  return ok;
})();

describe('an --out that is not a regular file of ours is refused and left as it was', () => {
  const commands = [
    ['export', (file: string, out: string) => ['export', file, '--method', 'packed-4d', '--out', out]],
    ['import', (file: string, out: string) => ['import', file, '--out', out]],
  ] as const;

  for (const [name, argv] of commands) {
    it.skipIf(!CAN_MKNOD)(`mw ${name}: a character device made for the test (skipped only where mknod is not permitted)`, async () => {
      const dir = join(TMP, `${name}-device`);
      const file = input(dir);
      const device = makeDevice(join(dir, 'null-device'))!;
      const before = fingerprint(device);
      const run = await mw(...argv(file, device));
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `mw ${name}: --out ${JSON.stringify(device)} is a character device, not a regular file: refusing to replace it (see 'mw ${name} --help')\n`,
      });
      expect(fingerprint(device)).toEqual(before);
      expect(lstatSync(device).isCharacterDevice()).toBe(true);
      expect(readdirSync(dir).sort()).toEqual(['in.json', 'null-device']);
    });

    it(`mw ${name}: a named pipe (mkfifo), a folder, a symbolic link and a hard link to the input`, async () => {
      const dir = join(TMP, `${name}-others`);
      const file = input(dir);
      const original = readFileSync(file);
      const fifo = join(dir, 'pipe');
      expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
      const folder = join(dir, 'folder');
      mkdirSync(folder);
      const symlink = join(dir, 'symlink.json');
      symlinkSync(file, symlink);
      const hardlink = join(dir, 'hardlink.json');
      linkSync(file, hardlink);
      const spelled = join(dir, '.', '..', `${name}-others`, 'in.json'); // another spelling of the same path
      const cases: [string, string][] = [
        [fifo, 'is a named pipe, not a regular file: refusing to replace it'],
        [folder, 'is a folder; give a file name'],
        [symlink, `is the input file ${file} under another name`],
        [hardlink, `is the input file ${file} under another name`],
      ];
      for (const [out, reason] of cases) {
        const before = fingerprint(out);
        const run = await mw(...argv(file, out));
        expect(run).toEqual({ code: 1, stdout: '', stderr: `mw ${name}: --out ${JSON.stringify(out)} ${reason} (see 'mw ${name} --help')\n` });
        expect(fingerprint(out)).toEqual(before);
      }
      expect((await mw(...argv(file, spelled))).code).toBe(1);
      expect(readFileSync(file)).toEqual(original);
      expect(statSync(file).nlink).toBe(2); // the hard link is still the input's second name
      expect(readdirSync(dir).filter((f) => f.includes('.partial'))).toEqual([]);
    });
  }

  it('mw train: --ckpt-out or --metrics on a named pipe or the data file under another name, before any work', async () => {
    const dir = join(TMP, 'train');
    mkdirSync(dir);
    const data = join(dir, 'data.jsonl');
    writeFileSync(data, `${JSON.stringify(JSON.parse(readFileSync(WORKED, 'utf8')))}\n`);
    const fifo = join(dir, 'pipe');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const link = join(dir, 'link.jsonl');
    linkSync(data, link);
    const train = (ckpt: string, metrics: string) =>
      mw('train', '--data', data, '--method', 'packed-4d', '--objective', 'sft', '--steps', '1', '--config', 'tiny', '--ckpt-out', ckpt, '--metrics', metrics);
    const help = " (see 'mw train --help')\n";
    expect(await train(fifo, join(dir, 'm.jsonl'))).toMatchObject({
      code: 1,
      stderr: `mw train: --ckpt-out ${JSON.stringify(fifo)} is a named pipe, not a regular file: refusing to replace it${help}`,
    });
    expect(await train(join(dir, 'c.safetensors'), fifo)).toMatchObject({
      code: 1,
      stderr: `mw train: --metrics ${JSON.stringify(fifo)} is a named pipe, not a regular file: refusing to replace it${help}`,
    });
    expect(await train(join(dir, 'c.safetensors'), link)).toMatchObject({
      code: 1,
      stderr: `mw train: --metrics ${JSON.stringify(link)} is the input file ${data} under another name${help}`,
    });
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['data.jsonl', 'link.jsonl', 'pipe']);
  });
});

/** Runs `node bin/mw.js` with TMPDIR pointed at `tmp`; resolves with the exit code or signal. */
function spawnMw(args: string[], tmp: string) {
  const child = spawn(process.execPath, ['bin/mw.js', ...args], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => void (stderr += d));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, done };
}

async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (condition()) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

describe('a killed command leaves nothing behind', () => {
  const cases = [
    ['export', 'SIGTERM'],
    ['export', 'SIGINT'],
    ['import', 'SIGTERM'],
  ] as const;
  it.each(cases)(
    'mw %s, %s once its partial exists: no .partial, no output, no spool folder; exit 128 + the signal number',
    async (command, signal) => {
      const dir = join(TMP, `kill-${command}-${signal}`);
      const tmp = join(dir, 'tmp');
      mkdirSync(tmp, { recursive: true });
      // 3,000 rollouts: a few seconds of work, long enough to be caught with its partial open.
      const base = generateRandomRollout({ seed: 5, size: 'small', id: 'x' });
      const file = join(dir, 'set.jsonl');
      writeFileSync(file, `${Array.from({ length: 3000 }, (_, i) => JSON.stringify({ ...base, id: `k${i}` })).join('\n')}\n`);
      const out = join(dir, command === 'export' ? 'out.safetensors' : 'out.jsonl');
      const args = command === 'export' ? ['export', file, '--method', 'packed-4d', '--out', out] : ['import', file, '--out', out];
      const { child, done } = spawnMw(args, tmp);
      const partial = `${out}.${child.pid}.partial`;
      expect(await waitFor(() => existsSync(partial), 60_000)).toBe(true);
      child.kill(signal);
      const result = await done;
      expect(result).toMatchObject({ code: signal === 'SIGTERM' ? 143 : 130, stderr: '' });
      expect(readdirSync(dir).sort()).toEqual(['set.jsonl', 'tmp']);
      expect(readdirSync(tmp).filter((f) => f.startsWith('mw-'))).toEqual([]);
    },
    90_000,
  );
});
