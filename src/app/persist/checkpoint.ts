// The checkpoint the drift panel scores with, kept in IndexedDB (through `idb`) so it is loaded again
// after a reload. One record: the safetensors bytes (a Blob) and the name they were loaded under. A
// database of its own, so neither the inspection views' store nor the training run's is upgraded
// under it. Every failure (private mode, quota, no IndexedDB) degrades to "nothing stored".
import { openDB, type IDBPDatabase } from 'idb';

const DB_NAME = 'memorywalker-scoring';
const STORE = 'checkpoints';
const KEY = 'scoring';

export interface StoredCheckpoint {
  name: string;
  blob: Blob;
  savedAt: number;
}

async function withDb<T>(body: (db: IDBPDatabase) => Promise<T>): Promise<T> {
  const db = await openDB(DB_NAME, 1, { upgrade: (db) => db.createObjectStore(STORE) });
  try {
    return await body(db);
  } finally {
    db.close();
  }
}

export async function saveScoringCheckpoint(name: string, blob: Blob): Promise<void> {
  const record: StoredCheckpoint = { name, blob, savedAt: Date.now() };
  await withDb((db) => db.put(STORE, record, KEY));
}

export async function loadScoringCheckpoint(): Promise<StoredCheckpoint | null> {
  try {
    const record = (await withDb((db) => db.get(STORE, KEY))) as StoredCheckpoint | undefined;
    return record && record.blob instanceof Blob && typeof record.name === 'string' ? record : null;
  } catch {
    return null;
  }
}

export async function forgetScoringCheckpoint(): Promise<void> {
  await withDb((db) => db.delete(STORE, KEY));
}
