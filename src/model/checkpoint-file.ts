// The one place Node writes and reads checkpoint files (mw train through src/run/files.ts, tests,
// scripts; the browser keeps the same bytes in IndexedDB). The optimizer state lives beside its
// checkpoint: run.safetensors → run.optim.safetensors. A pair is committed as one unit
// (docs/reliability.md): both files are written to `.partial` files and fsynced, then the weights are
// renamed into place, then the optimizer state. A reader sees the old pair, the new pair, or new
// weights whose optimizer `.partial` completes them (rolled forward on load); any other mismatch is
// refused. Stale `.partial` files go at the next save.

import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  type CheckpointPairBytes,
  type Digest,
  type LoadOptions,
  type OptimizerState,
  WEIGHTS_DIGEST_KEY,
  bindOptimizerState,
  checkPair,
  loadCheckpoint,
  loadOptimizerState,
} from './checkpoint';
import type { ModelConfig } from './config';
import { isRunning, openPartial } from '../util/output-file';
import { readSafetensorsHeader } from '../util/safetensors';
import { optimizerStatePath } from './checkpoint-name';

/** SHA-256 by Node's crypto: the digest checkpoint.ts computes in pure TypeScript, ~10x faster. */
export const nodeSha256: Digest = (bytes) => createHash('sha256').update(bytes).digest('hex');

export { optimizerStatePath };

/** A checkpoint file that cannot be used as it is: `file` names it, `reason` says why (one line). */
export class CheckpointFileError extends Error {
  override readonly name = 'CheckpointFileError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

function readBytes(path: string): Uint8Array {
  try {
    const b = readFileSync(path);
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CheckpointFileError(path, code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'not a file' : `cannot read file (${code ?? String(error)})`);
  }
}

/** Errors name the file: `PATH: checkpoint: …`. */
function inFile<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof CheckpointFileError) throw e;
    throw new CheckpointFileError(path, (e as Error).message);
  }
}

/** Every `PATH.<pid>.partial` beside PATH, from any process (`alive`: only those of running processes, else only of dead ones). */
function partialsOf(path: string, which: 'any' | 'stale' = 'any'): string[] {
  const dir = dirname(path);
  const name = basename(path);
  const entries = safe(() => readdirSync(dir)) ?? [];
  return entries
    .filter((e) => {
      const m = e.startsWith(`${name}.`) ? /^\.(\d+)\.partial$/.exec(e.slice(name.length)) : null;
      return m !== null && (which === 'any' || Number(m[1]) === process.pid || !isRunning(Number(m[1])));
    })
    .map((e) => join(dir, e));
}

/** Makes the renames in a folder durable (a rename is only on disk once its directory is). */
function syncFolder(path: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dirname(path), 'r');
    fsyncSync(fd);
  } catch {
    // Some file systems refuse to sync a directory; the renames stay atomic, only their durability is the OS's.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Rolls an interrupted save forward: when the weights on disk do not match the optimizer file (or
 * there is none) but an optimizer `.partial` bound to exactly these weights exists, that partial is
 * the other half of the pair and is renamed into place. Returns whether it did.
 */
export function recoverCheckpointPair(path: string, digest: Digest = nodeSha256): boolean {
  if (!existsSync(path)) return false;
  const optimizer = optimizerStatePath(path);
  const candidates = partialsOf(optimizer);
  if (candidates.length === 0) return false;
  const weights = readBytes(path);
  if (existsSync(optimizer) && safe(() => checkPair(weights, readBytes(optimizer), digest))?.ok) return false;
  for (const candidate of candidates) {
    const check = safe(() => checkPair(weights, readBytes(candidate), digest));
    if (check?.ok && check.bound) {
      renameSync(candidate, optimizer);
      syncFolder(optimizer);
      return true;
    }
  }
  return false;
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/**
 * Writes a checkpoint pair as one unit. `files` are the two files' bytes (saveCheckpointPair, or a
 * trainer's checkpoint(): an optimizer file without the weights digest is bound here); without
 * an optimizer file only the weights are written (atomically), and a stale optimizer file beside
 * them is removed, since it belongs to other weights.
 */
export function writeCheckpointPair(path: string, files: { weights: Uint8Array; optimizer?: Uint8Array | null }, digest: Digest = nodeSha256): void {
  const optimizer = optimizerStatePath(path);
  // An earlier save cut between its two renames is completed first, then its leftovers go.
  recoverCheckpointPair(path, digest);
  // A running process's partial is its save in progress, not a leftover (one writer per name: lockOutput).
  for (const stale of [...partialsOf(path, 'stale'), ...partialsOf(optimizer, 'stale')]) rmSync(stale, { force: true });
  let pair: CheckpointPairBytes | null = null;
  if (files.optimizer) {
    pair = { weights: files.weights, optimizer: files.optimizer };
    const meta = readSafetensorsHeader(pair.optimizer).metadata ?? {};
    if (meta[WEIGHTS_DIGEST_KEY] === undefined) pair = bindOptimizerState(pair, digest);
    else if (!checkPair(pair.weights, pair.optimizer, digest).ok) throw new CheckpointFileError(optimizer, 'the optimizer state is bound to other weights');
  }
  // Both partials are written and flushed before either is renamed: a full disk (OutputIOError naming
  // the file) leaves the old pair as it was, and both partials go, as on a signal.
  const weightsTemp = openPartial(path);
  const optimizerTemp = pair ? openPartial(optimizer) : null;
  try {
    weightsTemp.write(files.weights);
    if (pair) optimizerTemp!.write(pair.optimizer);
    weightsTemp.sync();
    optimizerTemp?.sync();
    // The commit: weights first, optimizer second (a cut between them is rolled forward on load).
    weightsTemp.commit();
    if (pair) optimizerTemp!.commit();
    else rmSync(optimizer, { force: true });
  } finally {
    weightsTemp.discard();
    optimizerTemp?.discard();
  }
  syncFolder(path);
}

export type CheckpointPair = ReturnType<typeof readCheckpointPair>;

/**
 * Reads a checkpoint and the optimizer state beside it as one pair: an interrupted save is rolled
 * forward when its optimizer `.partial` completes the weights, a mixed pair is refused naming the
 * optimizer file. Errors name the file: `PATH: checkpoint: …`.
 */
export function readCheckpointPair(path: string, options?: LoadOptions, digest: Digest = nodeSha256) {
  const recovered = safe(() => recoverCheckpointPair(path, digest)) ?? false;
  const { weights, metadata, bytes } = readCheckpointFile(path, options);
  return {
    weights,
    /** The weights file's `__metadata__` (config, and what mw train saved: step, schedule, seed). */
    metadata,
    /** The optimizer state beside the weights, or null when none was saved. */
    optimizer: readPairedOptimizer(path, bytes, weights.config, digest),
    /** Whether an interrupted save had to be rolled forward to read this pair. */
    recovered,
  };
}

/** A checkpoint's weights and `__metadata__` alone (an optimizer file beside it is not read), and its bytes. */
export function readCheckpointFile(path: string, options?: LoadOptions) {
  const bytes = readBytes(path);
  const weights = inFile(path, () => loadCheckpoint(bytes, options));
  return { weights, metadata: inFile(path, () => readSafetensorsHeader(bytes).metadata ?? {}), bytes };
}

function readPairedOptimizer(path: string, weightsBytes: Uint8Array, config: ModelConfig, digest: Digest): OptimizerState | null {
  const optimizerPath = optimizerStatePath(path);
  if (!existsSync(optimizerPath)) return null;
  return inFile(optimizerPath, () => {
    const bytes = readBytes(optimizerPath);
    const check = checkPair(weightsBytes, bytes, digest);
    if (!check.ok) throw new Error(`checkpoint: ${check.reason}; refusing to resume from it (the weights alone load without it)`);
    return loadOptimizerState(bytes, config);
  });
}
