// Every file the command line writes goes through here (Node only). An output only ever replaces a
// regular file that is not one of the command's inputs (a device, pipe, socket or folder, and any
// other name of an input file, are refused); it is written to `OUT.<pid>.partial` beside it, opened
// exclusively, and renamed into place; the partial goes on every exit path, SIGINT/SIGTERM/SIGHUP
// included. A full disk or quota is an OutputIOError naming the file (docs/reliability.md).

import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename } from 'node:path';

/** An output path the command must not write (the CLI's exit 1): `reason` is one line. */
export class OutputRefusedError extends Error {
  override readonly name = 'OutputRefusedError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/** Writing an output failed for a reason of the disk, not of the program (the CLI's exit 2): ENOSPC, EDQUOT, EIO… */
export class OutputIOError extends Error {
  override readonly name = 'OutputIOError';
  constructor(
    readonly file: string,
    readonly code: string,
    detail: string,
  ) {
    super(`${file}: cannot write: ${detail} (${code})`);
  }
}

const IO_CODES: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EIO: 'input/output error',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
};

/** `error` as an OutputIOError naming `file` when it is a condition of the disk; otherwise as it is. */
export function asOutputError(file: string, error: unknown): unknown {
  if (error instanceof OutputIOError || error instanceof OutputRefusedError) return error;
  const code = (error as NodeJS.ErrnoException)?.code;
  return code !== undefined && code in IO_CODES ? new OutputIOError(file, code, IO_CODES[code]) : error;
}

function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isCharacterDevice()) return 'a character device';
  if (s.isBlockDevice()) return 'a block device';
  if (s.isFIFO()) return 'a named pipe';
  if (s.isSocket()) return 'a socket';
  return 'not a regular file';
}

function statOrNull(path: string, follow = true): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch {
    return null;
  }
}

/**
 * Why `path` must not be written as an output of a command reading `inputs` (null when it may be):
 * it exists and is not a regular file, it is a link to nothing, or it is an input under another
 * name (a symbolic link, a hard link, another spelling: same device and inode, or same real path).
 */
export function outputProblem(path: string, inputs: readonly string[] = []): string | null {
  const link = statOrNull(path, false);
  if (!link) return null;
  const target = statOrNull(path);
  if (!target) return 'is a symbolic link to nothing';
  if (target.isDirectory()) return 'is a folder; give a file name';
  if (!target.isFile()) return `is ${kindOf(target)}, not a regular file: refusing to replace it`;
  for (const input of inputs) {
    const s = statOrNull(input);
    if (s && s.dev === target.dev && s.ino === target.ino) return `is the input file ${input} under another name`;
  }
  return null;
}

/** Throws OutputRefusedError when `path` may not be written (see outputProblem). */
export function assertOutput(path: string, inputs: readonly string[] = []): void {
  const problem = outputProblem(path, inputs);
  if (problem) throw new OutputRefusedError(path, problem);
}

/** The file a write to `path` replaces: through a symbolic link to the file it names, as a shell's `>` does. */
function realTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

// ---------------------------------------------------------------------------------------------
// Leftovers removed on every exit path: partial files, spool folders and lock files.

const leftovers = new Map<string, 'file' | 'folder'>();
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const SIGNAL_NUMBERS: Record<(typeof SIGNALS)[number], number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
const handlers = new Map<string, () => void>();

function removeLeftovers(): void {
  for (const [path, kind] of leftovers) {
    try {
      if (kind === 'folder') rmSync(path, { recursive: true, force: true });
      else unlinkSync(path);
    } catch {
      // already gone
    }
  }
  leftovers.clear();
}

const onExit = () => removeLeftovers();

function install(): void {
  if (handlers.size) return;
  for (const signal of SIGNALS) {
    const handler = () => {
      removeLeftovers();
      process.exit(128 + SIGNAL_NUMBERS[signal]);
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  process.on('exit', onExit);
}

function uninstall(): void {
  for (const [signal, handler] of handlers) process.off(signal, handler);
  handlers.clear();
  process.off('exit', onExit);
}

/** Removes `path` (a file, or a folder with what it holds) if the process exits or is signalled before `release`. */
export function removeOnExit(path: string, kind: 'file' | 'folder' = 'file'): void {
  leftovers.set(path, kind);
  install();
}

/** Forgets `path` (it was renamed into place or removed). */
export function release(path: string): void {
  leftovers.delete(path);
  if (leftovers.size === 0) uninstall();
}

// ---------------------------------------------------------------------------------------------
// The partial file and its commit.

/** A test's stand-in for the disk: called before each write with the bytes about to go to `file`. */
let writeFault: ((file: string, bytes: number) => void) | null = null;

/** Makes every later write through this module throw what `fault` throws (null: the real disk again). Tests only. */
export function setWriteFaultForTests(fault: ((file: string, bytes: number) => void) | null): void {
  writeFault = fault;
}

export interface PartialFile {
  /** The file the commit replaces (through a symbolic link: the file it names). */
  readonly target: string;
  /** `TARGET.<pid>.partial`, beside it. */
  readonly path: string;
  /** Appends bytes (a disk error is an OutputIOError naming `name`). */
  write(bytes: Uint8Array | string): void;
  /** Flushes what was written to the disk (fsync). */
  sync(): void;
  /** Flushes to disk, closes and renames over the target (refused if it has become something else than a regular file). */
  commit(options?: { sync?: boolean }): void;
  /** Closes and removes the partial (any number of times; after commit it does nothing). */
  discard(): void;
}

/**
 * Opens `NAME.<pid>.partial` beside the file `name` names, exclusively (an existing one of this pid is
 * a leftover of a dead process that had it: removed first), and registers it for removal on exit.
 */
export function openPartial(name: string, inputs: readonly string[] = []): PartialFile {
  assertOutput(name, inputs);
  const target = realTarget(name);
  const path = `${target}.${process.pid}.partial`;
  // Registered before it exists: a signal that arrives just after the open still finds it.
  removeOnExit(path);
  let fd: number;
  try {
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      unlinkSync(path); // ours by name: this pid's leftover (a link planted there is removed, not followed)
      fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o666);
    }
  } catch (error) {
    release(path);
    throw asOutputError(name, error);
  }
  let open = true;
  let done = false;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  const discard = () => {
    if (done) return;
    done = true;
    try {
      close();
    } catch {
      // the descriptor is gone either way
    }
    rmSync(path, { force: true });
    release(path);
  };
  return {
    target,
    path,
    write(data) {
      const bytes = typeof data === 'string' ? Buffer.from(data) : data;
      try {
        writeFault?.(name, bytes.length);
        for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
      } catch (error) {
        throw asOutputError(name, error);
      }
    },
    sync() {
      try {
        fsyncSync(fd);
      } catch (error) {
        throw asOutputError(name, error);
      }
    },
    commit({ sync = false } = {}) {
      try {
        if (sync) fsyncSync(fd);
        close();
        // Checked again at the last moment: what was a regular file at the start may have been replaced since.
        assertOutput(target, inputs);
        renameSync(path, target);
      } catch (error) {
        discard();
        throw asOutputError(name, error);
      }
      done = true;
      release(path);
    },
    discard,
  };
}

/** Writes `name` whole or not at all through a partial file (a throw discards it). */
export function writeOutputSync(name: string, data: Uint8Array | string, options: { inputs?: readonly string[]; sync?: boolean } = {}): void {
  const partial = openPartial(name, options.inputs);
  try {
    partial.write(data);
    partial.commit({ sync: options.sync });
  } finally {
    partial.discard();
  }
}

// ---------------------------------------------------------------------------------------------
// One writer per output name.

/** The process holding a lock file, if it is still running. */
function liveHolder(lock: string): number | null {
  let text: string;
  try {
    text = readFileSync(lock, 'utf8');
  } catch {
    return null;
  }
  const pid = Number.parseInt(text, 10);
  if (!Number.isInteger(pid) || pid <= 0) return null; // unreadable: a writer died mid-write, stale
  return isRunning(pid) ? pid : null;
}

/** Whether process `pid` exists (EPERM: it does, under another user). */
export function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `NAME.lock` (holding this pid) for the life of the process, or throws OutputRefusedError
 * naming the running process that holds it. A lock left by a process that is no longer running is
 * taken over. Returns the function that releases it (also run on exit and on SIGINT/SIGTERM/SIGHUP).
 */
export function lockOutput(name: string, description = 'written by another process'): () => void {
  const lock = `${realTarget(name)}.lock`;
  for (let attempt = 0; attempt < 3; attempt++) {
    let fd: number;
    try {
      fd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw asOutputError(lock, error);
      const holder = liveHolder(lock);
      if (holder !== null && holder !== process.pid) {
        throw new OutputRefusedError(name, `is ${description} (pid ${holder}, lock file ${basename(lock)}); wait for it to finish or choose another name`);
      }
      rmSync(lock, { force: true }); // stale: its process is gone
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
      fsyncSync(fd);
    } catch (error) {
      closeSync(fd);
      rmSync(lock, { force: true });
      throw asOutputError(lock, error);
    }
    const mine = fstatSync(fd);
    closeSync(fd);
    const now = statOrNull(lock, false);
    const ours = now !== null && now.ino === mine.ino && now.dev === mine.dev;
    if (!ours) continue; // another process took over the same stale lock at the same moment: look again
    removeOnExit(lock);
    return () => {
      if (liveHolder(lock) === process.pid) rmSync(lock, { force: true });
      release(lock);
    };
  }
  const holder = liveHolder(lock);
  throw new OutputRefusedError(name, `is ${description} (pid ${holder ?? 'unknown'}, lock file ${basename(lock)})`);
}
