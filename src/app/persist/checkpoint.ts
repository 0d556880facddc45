// The checkpoint the drift panel scores with, kept in IndexedDB (through `idb`) so it is loaded again
// after a reload. One record: the safetensors bytes (a Blob) and the name they were loaded under. A
// database of its own, so neither the inspection views' store nor the training run's is upgraded
// under it. Every failure (private mode, quota, no IndexedDB) degrades to "nothing stored".
import { withStore } from './db';

const DB_NAME = 'memorywalker-scoring';
const STORE = 'checkpoints';
const KEY = 'scoring';

export interface StoredCheckpoint {
  name: string;
  blob: Blob;
  savedAt: number;
}

export async function saveScoringCheckpoint(name: string, blob: Blob): Promise<void> {
  const record: StoredCheckpoint = { name, blob, savedAt: Date.now() };
  await withStore(DB_NAME, STORE, (db) => db.put(STORE, record, KEY));
}

export async function loadScoringCheckpoint(): Promise<StoredCheckpoint | null> {
  try {
    const record = (await withStore(DB_NAME, STORE, (db) => db.get(STORE, KEY))) as StoredCheckpoint | undefined;
    return record && record.blob instanceof Blob && typeof record.name === 'string' ? record : null;
  } catch {
    return null;
  }
}

export async function forgetScoringCheckpoint(): Promise<void> {
  await withStore(DB_NAME, STORE, (db) => db.delete(STORE, KEY));
}
