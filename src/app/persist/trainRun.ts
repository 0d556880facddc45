// The training run in IndexedDB (through `idb`), written by the worker: the run (config, model,
// whether it was playing), its periodic checkpoints (one per lane, GPT-2 safetensors bytes with the
// AdamW file bound to them, docs/reliability.md) and the metric history up to that checkpoint, all in
// one transaction so a reload or a crash finds them consistent (the controller checks each pair on
// load). Imported checkpoints are kept by name. A database of its own, so the inspection views'
// store is never upgraded under them.

import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { Method } from '../../plan/types';
import type { RestoredRun, StoredFile, StoredRun } from '../../run/controller';
import type { LaneCheckpoint, MetricRecord } from '../../run/engine';

const CURRENT = 'current';

export type { RestoredRun, StoredFile, StoredRun };

interface TrainDb extends DBSchema {
  /** The current run, under CURRENT. */
  runs: { key: string; value: StoredRun };
  /** A run's metric history up to its last checkpoint, by run id. */
  history: { key: string; value: MetricRecord[] };
  /** A lane's last checkpoint, by `run id/method`. */
  lanes: { key: string; value: LaneCheckpoint };
  /** Checkpoints kept by name. */
  files: { key: string; value: StoredFile };
}

let dbPromise: Promise<IDBPDatabase<TrainDb>> | null = null;

function openDb(): Promise<IDBPDatabase<TrainDb>> {
  dbPromise ??= openDB<TrainDb>('memorywalker-train', 1, {
    upgrade(db) {
      for (const store of ['runs', 'history', 'lanes', 'files'] as const) if (!db.objectStoreNames.contains(store)) db.createObjectStore(store);
    },
  });
  dbPromise.catch(() => (dbPromise = null));
  return dbPromise;
}

const laneKey = (runId: string, method: Method) => `${runId}/${method}`;

/** The run record alone (play/pause, a new run before its first checkpoint). */
export async function saveRun(run: StoredRun): Promise<void> {
  await (await openDb()).put('runs', run, CURRENT);
}

/**
 * A checkpoint: every lane's pair (weights and the optimizer state bound to them), the history up
 * to it and the run record, atomically: all in one transaction, aborted if any write fails.
 */
export async function saveCheckpoint(run: StoredRun, lanes: readonly LaneCheckpoint[], history: readonly MetricRecord[]): Promise<void> {
  const tx = (await openDb()).transaction(['runs', 'history', 'lanes'], 'readwrite');
  const pending: Promise<unknown>[] = [tx.done];
  try {
    for (const lane of lanes) pending.push(tx.objectStore('lanes').put(lane, laneKey(run.info.id, lane.method)));
    pending.push(tx.objectStore('history').put(history as MetricRecord[], run.info.id));
    pending.push(tx.objectStore('runs').put(run, CURRENT));
    await Promise.all(pending);
  } catch (error) {
    // A put that throws (a value IndexedDB cannot clone) does not abort the transaction by itself:
    // the puts before it would commit, a checkpoint of mixed steps. Abort it, so the last one stays whole.
    for (const p of pending) p.catch(() => undefined);
    try {
      tx.abort();
    } catch {
      // already finished (aborted by the failed request)
    }
    throw error;
  }
}

/** The current run with its last checkpoint and the history up to it, or null. */
export async function loadRun(): Promise<RestoredRun | null> {
  const tx = (await openDb()).transaction(['runs', 'history', 'lanes']);
  const run = await tx.objectStore('runs').get(CURRENT);
  if (!run) return null;
  const history = (await tx.objectStore('history').get(run.info.id)) ?? [];
  const methods = run.info.checkpointStep > 0 ? run.info.config.methods : [];
  const lanes = await Promise.all(methods.map((m) => tx.objectStore('lanes').get(laneKey(run.info.id, m))));
  return { ...run, lanes: lanes.filter((lane) => lane !== undefined), history };
}

/** Forgets the current run: its record, checkpoints and history. */
export async function clearRun(): Promise<void> {
  const db = await openDb();
  const run = await db.get('runs', CURRENT);
  const tx = db.transaction(['runs', 'history', 'lanes'], 'readwrite');
  await Promise.all([
    tx.objectStore('runs').delete(CURRENT),
    ...(run
      ? [tx.objectStore('history').delete(run.info.id), ...run.info.config.methods.map((m) => tx.objectStore('lanes').delete(laneKey(run.info.id, m)))]
      : []),
    tx.done,
  ]);
}

export async function saveFile(file: StoredFile): Promise<void> {
  await (await openDb()).put('files', file, file.name);
}

export async function loadFile(name: string): Promise<StoredFile | null> {
  return (await (await openDb()).get('files', name)) ?? null;
}
