// The last opened rollout set, kept in IndexedDB (through `idb`) so it comes back after a reload.
// One database, one object store, one record: the file itself (a Blob, so a 100 MB JSONL is not
// copied into a string) with its name. Every failure (private mode, quota, no IndexedDB) degrades
// to "nothing stored".
import { withStore } from './db';
import { isImportTokenizerName, type ImportTokenizerName } from '../protocol/parse';
import type { SourceRef } from '../url/schema';

const DB_NAME = 'memorywalker-workbench';
const STORE = 'sets';
const KEY = 'last';

export interface StoredSet extends SourceRef {
  blob: Blob;
  savedAt: number;
  /** How its text was tokenized when imported (sets stored before the choice existed: byte); `hf:<name>`: the model folder's. */
  tokenizer: ImportTokenizerName;
}

export async function saveLastSet(kind: StoredSet['kind'], name: string, blob: Blob, tokenizer: ImportTokenizerName = 'byte'): Promise<void> {
  const record: StoredSet = { kind, name, blob, savedAt: Date.now(), tokenizer };
  await withStore(DB_NAME, STORE, (db) => db.put(STORE, record, KEY));
}

export async function loadLastSet(): Promise<StoredSet | null> {
  try {
    const record = (await withStore(DB_NAME, STORE, (db) => db.get(STORE, KEY))) as StoredSet | undefined;
    const ok = record && record.blob instanceof Blob && typeof record.name === 'string' && (record.kind === 'file' || record.kind === 'example');
    return ok ? { ...record, tokenizer: isImportTokenizerName(record.tokenizer) ? record.tokenizer : 'byte' } : null;
  } catch {
    return null;
  }
}
