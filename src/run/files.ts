// A run's checkpoint files on disk (the command line): CKPT holds the GPT-2 weights with the run's
// settings in its metadata, CKPT.optim.safetensors beside it the AdamW state and update count, the
// two one unit (docs/reliability.md). Written and read only through src/model/checkpoint-file.ts's
// pair writer and reader; a file that cannot be used is invalid input naming it. Node only.

import type { Trainer } from '../gpu/train';
import { CheckpointFileError, nodeSha256, readCheckpointPair, writeCheckpointPair, type CheckpointPair } from '../model/checkpoint-file';
import { ValidationError } from '../rollout/errors';

/** The trainer's weights and AdamW state as CKPT and its optimizer file, committed as one pair; `metadata` gains the update count. */
export async function writeLaneCheckpoint(path: string, trainer: Trainer, metadata: Record<string, string>): Promise<void> {
  writeCheckpointPair(path, await trainer.checkpoint(metadata, nodeSha256));
}

/**
 * CKPT and the AdamW state beside it (null when there is none) as one pair: a save cut between its
 * renames is rolled forward (`recovered`), a mixed pair refused as invalid input naming the optimizer file.
 */
export function readLaneCheckpoint(path: string): CheckpointPair & { path: string } {
  try {
    return { path, ...readCheckpointPair(path) };
  } catch (error) {
    if (error instanceof CheckpointFileError) throw new ValidationError({ file: error.file }, error.reason);
    throw error;
  }
}
