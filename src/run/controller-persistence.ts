// The run controller's persistence: the run record and its checkpoints in the host's store (IndexedDB
// in the browser), and the engine rebuilt from a stored checkpoint or a kept checkpoint file.

import type { Gpu } from '../gpu/runtime/device';
import { loadCheckpoint, loadCheckpointPair } from '../model/checkpoint';
import type { ModelWeights } from '../model/params';
import { initWeights } from '../model/params';
import type { Method } from '../plan/types';
import { BYTE_VOCAB } from '../rollout/tokenizer';
import { presetModel, runSpecOf, type RunConfig } from './config';
import { withGpu } from './controller-device';
import type { ControllerState, RunStore } from './controller-state';
import { createRunEngine, RunRefusedError, type LaneCheckpoint, type LaneState, type MetricRecord, type RunEngine } from './engine';

/** Why a checkpoint cannot play the environments, or null: they speak the byte tokenizer. */
export function byteVocabularyProblem(weights: ModelWeights): string | null {
  const V = weights.config.vocabSize;
  return V === BYTE_VOCAB ? null : `the environments speak the byte tokenizer (${BYTE_VOCAB} tokens); this checkpoint has a vocabulary of ${V}`;
}

/** The checkpoint's step (the slowest lane's) and the history up to each lane's checkpoint. */
export function atCheckpoint(lanes: readonly LaneCheckpoint[], history: readonly MetricRecord[]) {
  const upTo = new Map(lanes.map((l) => [l.method, l.step]));
  return { step: lanes.length ? Math.min(...lanes.map((l) => l.step)) : 0, history: history.filter((r) => r.step <= (upTo.get(r.method) ?? 0)) };
}

/**
 * The stored lanes as one pair each (docs/reliability.md): the optimizer state must be bound to its
 * weights and at the lane's step; a mixed pair is refused, naming the lane, rather than resumed wrongly.
 */
function laneStates(lanes: readonly LaneCheckpoint[]) {
  const out: Partial<Record<Method, LaneState>> = {};
  for (const lane of lanes) {
    try {
      const { weights, optimizer } = loadCheckpointPair(lane);
      if (optimizer!.step !== lane.step) throw new Error(`checkpoint: the optimizer state is at step ${optimizer!.step}, the lane at step ${lane.step}`);
      out[lane.method] = { weights, optimizer: optimizer! };
    } catch (error) {
      throw new RunRefusedError(`the ${lane.method} lane's checkpoint of step ${lane.step}: ${(error as Error).message}`);
    }
  }
  return out;
}

/** The run's engine from its starting weights (a kept checkpoint, or fresh ones from the preset and the seed) and its stored lanes. */
export async function buildEngine(store: RunStore, device: Gpu, config: RunConfig, lanes: readonly LaneCheckpoint[]): Promise<RunEngine> {
  const file = config.checkpoint ? await store.loadFile(config.checkpoint) : null;
  if (config.checkpoint && !file) throw new RunRefusedError(`checkpoint ${config.checkpoint} is not stored in this browser: import it again`);
  const weights = file ? loadCheckpoint(file.bytes, { maxVocab: BYTE_VOCAB }) : initWeights(presetModel(config), config.seed);
  const refused = byteVocabularyProblem(weights);
  if (refused) throw new RunRefusedError(refused);
  // createGpuModel throws for what the adapter cannot hold, naming the limit: the caller shows it as the refusal.
  return createRunEngine(device, runSpecOf(config), { weights, resume: laneStates(lanes) });
}

/** Writes the run record (whether it plays); a store that fails loses only the record. */
export async function persistRun(run: ControllerState): Promise<void> {
  if (run.info) await run.deps.store.saveRun({ info: run.info, playing: run.playing }).catch(() => undefined);
}

/** Every lane's checkpoint, kept in memory (device loss) and in the store with the history (reloads). */
export async function checkpoint(run: ControllerState): Promise<void> {
  const current = run.engine;
  const { store, emit } = run.deps;
  if (!current || !run.info) return;
  const lanes = await withGpu(run, () => current.checkpoint({ run: run.info!.id }));
  if (current !== run.engine || !run.info) return;
  run.lastCheckpoint = lanes;
  const { step, history: kept } = atCheckpoint(lanes, run.history);
  run.info = { ...run.info, checkpointStep: step };
  const unstored = (error: Error) => emit({ type: 'gpu-error', message: `the checkpoint could not be stored: ${error.message}` });
  await store.saveCheckpoint({ info: run.info, playing: run.playing }, lanes, kept).catch(unstored);
  emit({ type: 'checkpointed', step });
}
