// Node file helpers around checkpoint.ts (the CLI and scripts; the browser passes File bytes
// directly). The optimizer state lives beside its checkpoint: run.safetensors → run.optim.safetensors.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type LoadOptions, type OptimizerState, loadCheckpoint, loadOptimizerState, saveCheckpoint, saveOptimizerState } from './checkpoint';
import { optimizerStatePath } from './checkpoint-name';
import type { ModelWeights } from './params';

export { optimizerStatePath };

function readBytes(path: string): Uint8Array {
  const b = readFileSync(path);
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Errors name the file: `PATH: checkpoint: …`. */
function inFile<T>(path: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new Error(`${path}: ${(e as Error).message}`);
  }
}

export function readCheckpointFile(path: string, options?: LoadOptions): ModelWeights {
  return inFile(path, () => loadCheckpoint(readBytes(path), options));
}

/** Writes the checkpoint and, when given, its optimizer state beside it. */
export function writeCheckpointFile(path: string, weights: ModelWeights, optimizer?: OptimizerState, metadata?: Record<string, string>): void {
  writeFileSync(path, saveCheckpoint(weights, metadata));
  if (optimizer) writeFileSync(optimizerStatePath(path), saveOptimizerState(weights.config, optimizer));
}

/** The optimizer state beside `checkpointPath`, or null when none was saved. */
export function readOptimizerStateFile(checkpointPath: string, weights: ModelWeights): OptimizerState | null {
  const path = optimizerStatePath(checkpointPath);
  if (!existsSync(path)) return null;
  return inFile(path, () => loadOptimizerState(readBytes(path), weights.config));
}
