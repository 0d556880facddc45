// The model the drift panel scores with, kept in IndexedDB (through `idb`) so it is loaded again after a
// reload. One record: a GPT-2 checkpoint (the safetensors bytes, a Blob) or a model folder (its files, each
// a Blob, by name in the folder) under the name they were loaded with. A folder above FOLDER_KEEP_BYTES is
// not copied into the browser: only its name and size are kept, and the panel asks to pick it again. A
// database of its own, so neither the inspection views' store nor the training run's is upgraded under it.
// Every failure (private mode, quota, no IndexedDB) degrades to "nothing stored".
import { withStore } from './db';

const DB_NAME = 'memorywalker-scoring';
const STORE = 'checkpoints';
const KEY = 'scoring';

/** The largest model folder kept in the browser (IndexedDB copies every file it keeps): 2 GiB. */
export const FOLDER_KEEP_BYTES = 2 * 2 ** 30;

export type StoredCheckpoint =
  | { kind: 'checkpoint'; name: string; blob: Blob; savedAt: number }
  | { kind: 'folder'; name: string; files: Map<string, Blob>; savedAt: number }
  /** A folder too large to keep: its name and total bytes, for the line that asks to pick it again. */
  | { kind: 'folder-not-kept'; name: string; bytes: number; savedAt: number }
  /** A model from the Hub: its id only, the files being in the page's Hub cache (OPFS). */
  | { kind: 'hub'; name: string; id: string; savedAt: number };

export async function saveScoringCheckpoint(name: string, blob: Blob): Promise<void> {
  const record: StoredCheckpoint = { kind: 'checkpoint', name, blob, savedAt: Date.now() };
  await withStore(DB_NAME, STORE, (db) => db.put(STORE, record, KEY));
}

/** Keeps a model folder's files (or, above `limit` bytes in all, only its name and size). */
export async function saveScoringFolder(name: string, files: ReadonlyMap<string, Blob>, limit = FOLDER_KEEP_BYTES): Promise<void> {
  const bytes = [...files.values()].reduce((n, b) => n + b.size, 0);
  const savedAt = Date.now();
  const record: StoredCheckpoint = bytes > limit ? { kind: 'folder-not-kept', name, bytes, savedAt } : { kind: 'folder', name, files: new Map(files), savedAt };
  await withStore(DB_NAME, STORE, (db) => db.put(STORE, record, KEY));
}

/** Keeps a Hub model's id: loaded again from the page's Hub cache on start. */
export async function saveScoringHubModel(name: string, id: string): Promise<void> {
  const record: StoredCheckpoint = { kind: 'hub', name, id, savedAt: Date.now() };
  await withStore(DB_NAME, STORE, (db) => db.put(STORE, record, KEY));
}

export async function loadScoringCheckpoint(): Promise<StoredCheckpoint | null> {
  try {
    const record = (await withStore(DB_NAME, STORE, (db) => db.get(STORE, KEY))) as (Partial<StoredCheckpoint> & { blob?: unknown }) | undefined;
    if (!record || typeof record.name !== 'string') return null;
    // Records written before folders were kept have no kind: a checkpoint.
    if ((record.kind ?? 'checkpoint') === 'checkpoint') {
      return record.blob instanceof Blob ? { kind: 'checkpoint', name: record.name, blob: record.blob, savedAt: Number(record.savedAt) } : null;
    }
    if (record.kind === 'folder') {
      const { files } = record as { files?: unknown };
      return files instanceof Map && [...files.values()].every((b) => b instanceof Blob) ? (record as StoredCheckpoint) : null;
    }
    if (record.kind === 'hub') return typeof (record as { id?: unknown }).id === 'string' ? (record as StoredCheckpoint) : null;
    if (record.kind === 'folder-not-kept') return typeof (record as { bytes?: unknown }).bytes === 'number' ? (record as StoredCheckpoint) : null;
    return null;
  } catch {
    return null;
  }
}

export async function forgetScoringCheckpoint(): Promise<void> {
  await withStore(DB_NAME, STORE, (db) => db.delete(STORE, KEY));
}
