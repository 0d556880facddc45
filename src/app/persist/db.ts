// A database of one object store (through `idb`), opened for one call and closed after it, so no
// page holds it open: what the last opened set and the scoring checkpoint are kept in.
import { openDB, type IDBPDatabase } from 'idb';

export async function withStore<T>(name: string, store: string, body: (db: IDBPDatabase) => Promise<T>): Promise<T> {
  const db = await openDB(name, 1, { upgrade: (db) => db.createObjectStore(store) });
  try {
    return await body(db);
  } finally {
    db.close();
  }
}
