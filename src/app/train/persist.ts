// The training run in IndexedDB, written by the worker: the run (config, model, whether it was
// playing), its periodic checkpoints (one per lane, GPT-2 safetensors bytes with the AdamW file
// beside them) and the metric history up to that checkpoint, all in one transaction so a reload or
// a crash finds them consistent. Imported checkpoints are kept by name. A database of its own, so
// the inspection views' store is never upgraded under them.

import type { Method } from '../../plan/types';
import type { RestoredRun, StoredFile, StoredRun } from '../../run/controller';
import type { LaneCheckpoint, MetricRecord } from '../../run/engine';

const DB_NAME = 'memorywalker-train';
const VERSION = 1;
const RUNS = 'runs';
const HISTORY = 'history';
const LANES = 'lanes';
const FILES = 'files';
const CURRENT = 'current';

let dbPromise: Promise<IDBDatabase> | null = null;

function openDb(): Promise<IDBDatabase> {
  dbPromise ??= new Promise<IDBDatabase>((resolve, reject) => {
    if (typeof indexedDB === 'undefined') return reject(new Error('IndexedDB is not available'));
    const request = indexedDB.open(DB_NAME, VERSION);
    request.onupgradeneeded = () => {
      const db = request.result;
      for (const store of [RUNS, HISTORY, LANES, FILES]) if (!db.objectStoreNames.contains(store)) db.createObjectStore(store);
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB open failed'));
  });
  dbPromise.catch(() => (dbPromise = null));
  return dbPromise;
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
  });
}

function result<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB request failed'));
  });
}

const laneKey = (runId: string, method: Method) => `${runId}/${method}`;

/** The run record alone (play/pause, a new run before its first checkpoint). */
export async function saveRun(run: StoredRun): Promise<void> {
  const db = await openDb();
  const tx = db.transaction(RUNS, 'readwrite');
  tx.objectStore(RUNS).put(run, CURRENT);
  await done(tx);
}

/** A checkpoint: every lane's files, the history up to it and the run record, atomically. */
export async function saveCheckpoint(run: StoredRun, lanes: readonly LaneCheckpoint[], history: readonly MetricRecord[]): Promise<void> {
  const db = await openDb();
  const tx = db.transaction([RUNS, HISTORY, LANES], 'readwrite');
  for (const lane of lanes) tx.objectStore(LANES).put(lane, laneKey(run.info.id, lane.method));
  tx.objectStore(HISTORY).put(history, run.info.id);
  tx.objectStore(RUNS).put(run, CURRENT);
  await done(tx);
}

/** The current run with its last checkpoint and the history up to it, or null. */
export async function loadRun(): Promise<RestoredRun | null> {
  const db = await openDb();
  const tx = db.transaction([RUNS, HISTORY, LANES], 'readonly');
  const run = await result(tx.objectStore(RUNS).get(CURRENT) as IDBRequest<StoredRun | undefined>);
  if (!run) return null;
  const history = (await result(tx.objectStore(HISTORY).get(run.info.id) as IDBRequest<MetricRecord[] | undefined>)) ?? [];
  const lanes: LaneCheckpoint[] = [];
  if (run.info.checkpointStep > 0) {
    for (const method of run.info.config.methods) {
      const lane = await result(tx.objectStore(LANES).get(laneKey(run.info.id, method)) as IDBRequest<LaneCheckpoint | undefined>);
      if (lane) lanes.push(lane);
    }
  }
  return { ...run, lanes, history };
}

/** Forgets the current run: its record, checkpoints and history. */
export async function clearRun(): Promise<void> {
  const db = await openDb();
  const run = await result(db.transaction(RUNS, 'readonly').objectStore(RUNS).get(CURRENT) as IDBRequest<StoredRun | undefined>);
  const tx = db.transaction([RUNS, HISTORY, LANES], 'readwrite');
  tx.objectStore(RUNS).delete(CURRENT);
  if (run) {
    tx.objectStore(HISTORY).delete(run.info.id);
    for (const method of run.info.config.methods) tx.objectStore(LANES).delete(laneKey(run.info.id, method));
  }
  await done(tx);
}

export async function saveFile(file: StoredFile): Promise<void> {
  const db = await openDb();
  const tx = db.transaction(FILES, 'readwrite');
  tx.objectStore(FILES).put(file, file.name);
  await done(tx);
}

export async function loadFile(name: string): Promise<StoredFile | null> {
  const db = await openDb();
  return (await result(db.transaction(FILES, 'readonly').objectStore(FILES).get(name) as IDBRequest<StoredFile | undefined>)) ?? null;
}
