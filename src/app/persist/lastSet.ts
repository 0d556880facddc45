// The last opened rollout set, kept in IndexedDB so it comes back after a reload. One database,
// one object store, one record: the file itself (a Blob, so a 100 MB JSONL is not copied into a
// string) with its name. Every failure (private mode, quota, no IndexedDB) degrades to "nothing stored".

const DB_NAME = 'memorywalker-workbench';
const STORE = 'sets';
const KEY = 'last';

export interface StoredSet {
  /** Where the set came from: a file the person opened, or a built-in example. */
  kind: 'file' | 'example';
  name: string;
  blob: Blob;
  savedAt: number;
}

function openDb(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    if (typeof indexedDB === 'undefined') return reject(new Error('IndexedDB is not available'));
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB open failed'));
  });
}

function run<T>(mode: IDBTransactionMode, body: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return openDb().then(
    (db) =>
      new Promise<T>((resolve, reject) => {
        const tx = db.transaction(STORE, mode);
        const request = body(tx.objectStore(STORE));
        tx.oncomplete = () => {
          db.close();
          resolve(request.result);
        };
        tx.onerror = tx.onabort = () => {
          db.close();
          reject(tx.error ?? request.error ?? new Error('IndexedDB transaction failed'));
        };
      }),
  );
}

export async function saveLastSet(kind: StoredSet['kind'], name: string, blob: Blob): Promise<void> {
  const record: StoredSet = { kind, name, blob, savedAt: Date.now() };
  await run('readwrite', (store) => store.put(record, KEY));
}

export async function loadLastSet(): Promise<StoredSet | null> {
  try {
    const record = (await run('readonly', (store) => store.get(KEY))) as StoredSet | undefined;
    const ok = record && record.blob instanceof Blob && typeof record.name === 'string' && (record.kind === 'file' || record.kind === 'example');
    return ok ? record : null;
  } catch {
    return null;
  }
}

export async function clearLastSet(): Promise<void> {
  await run('readwrite', (store) => store.delete(KEY));
}
