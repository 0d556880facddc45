// A run's checkpoint files on disk (the command line): CKPT holds the GPT-2 weights with the run's
// settings in its metadata, CKPT.optim.safetensors beside it the AdamW state and update count. The
// one place the CLI writes and reads them, through src/model/checkpoint-file.ts. Node only.

import type { Trainer } from '../gpu/train';
import type { OptimizerState } from '../model/checkpoint';
import { optimizerStatePath, readOptimizerStateFile, writeCheckpointFile } from '../model/checkpoint-file';
import type { ModelWeights } from '../model/params';
import { ValidationError } from '../rollout/errors';

/** The trainer's weights and AdamW state as CKPT and its optimizer file; `metadata` gains the update count. */
export async function writeLaneCheckpoint(path: string, trainer: Trainer, metadata: Record<string, string>): Promise<void> {
  const { weights, optimizer } = await trainer.readState();
  writeCheckpointFile(path, weights, optimizer, { ...metadata, step: String(optimizer.step) });
}

/** The AdamW state beside `checkpointPath`, or null when there is none; a bad file is invalid input naming it. */
export function readOptimizerState(checkpointPath: string, weights: ModelWeights): OptimizerState | null {
  try {
    return readOptimizerStateFile(checkpointPath, weights);
  } catch (error) {
    const file = optimizerStatePath(checkpointPath);
    const message = error instanceof Error ? error.message : String(error);
    throw new ValidationError({ file }, message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message);
  }
}
