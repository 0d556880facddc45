// The page's Hub cache: the Origin Private File System, laid out as the Hub's own cache is on disk
// (hub/models--ORG--NAME/{blobs,refs,snapshots,.no_exist}; a snapshot's file holds its blob's key, as OPFS has no
// links). A download in progress is BLOB.incomplete, committed every PARTIAL_COMMIT_BYTES so a closed tab
// keeps most of it; loading a cached model reads OPFS only. The model's files come back as Files (read by
// byte range, never whole), the map the scoring worker loads a folder from.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { HubCacheError, type HubModelRef, type HubOptions, type HubStore, type PartialWriter, fetchHubModel } from '../../model/hub/hub';

/** A partial download is committed to OPFS after this many bytes (a writable's data is only kept on close). */
const PARTIAL_COMMIT_BYTES = 32 * 2 ** 20;
const ROOT = 'hub';

const safe = (name: string) => encodeURIComponent(name);

async function dir(parent: FileSystemDirectoryHandle, path: readonly string[], create: boolean): Promise<FileSystemDirectoryHandle | null> {
  let at = parent;
  for (const part of path) {
    try {
      at = await at.getDirectoryHandle(safe(part), { create });
    } catch {
      return null;
    }
  }
  return at;
}

async function fileIn(parent: FileSystemDirectoryHandle | null, name: string): Promise<File | null> {
  if (!parent) return null;
  try {
    return await (await parent.getFileHandle(safe(name))).getFile();
  } catch {
    return null;
  }
}

/** A quota refusal as one line. */
function quotaError(error: unknown): Error {
  if ((error as DOMException)?.name === 'QuotaExceededError')
    return new HubCacheError("the browser's storage quota is full (the part downloaded is kept; clear the Hub cache or free space, then load again)");
  return error as Error;
}

async function writeFile(parent: FileSystemDirectoryHandle, name: string, data: string): Promise<void> {
  try {
    const writable = await (await parent.getFileHandle(safe(name), { create: true })).createWritable();
    await writable.write(data);
    await writable.close();
  } catch (error) {
    throw quotaError(error);
  }
}

async function opfsRoot(): Promise<FileSystemDirectoryHandle> {
  if (!navigator.storage?.getDirectory) throw new Error('this browser has no Origin Private File System to keep models in');
  return (await dir(await navigator.storage.getDirectory(), [ROOT], true))!;
}

export function repoFolderName(repo: string): string {
  return `models--${repo.replace(/\//g, '--')}`;
}

/** The store for one repository, in OPFS. */
export async function opfsHubStore(repo: string): Promise<HubStore> {
  const repoDir = (await dir(await opfsRoot(), [repoFolderName(repo)], true))!;
  const sub = (path: string[], create = false) => dir(repoDir, path, create);
  const blobs = async () => (await sub(['blobs'], true))!;
  return {
    async readRef(revision) {
      const file = await fileIn(await sub(['refs']), revision);
      return file ? (await file.text()).trim() || null : null;
    },
    async writeRef(revision, commit) {
      await writeFile((await sub(['refs'], true))!, revision, commit);
    },
    async fileState(commit, file) {
      const pointer = await fileIn(await sub(['snapshots', commit]), file);
      if (pointer && (await fileIn(await sub(['blobs']), (await pointer.text()).trim()))) return 'present';
      return (await fileIn(await sub(['.no_exist', commit]), file)) ? 'absent' : 'unknown';
    },
    async markAbsent(commit, file) {
      await writeFile((await sub(['.no_exist', commit], true))!, file, '');
    },
    async readText(commit, file) {
      const pointer = await fileIn(await sub(['snapshots', commit]), file);
      const blob = pointer && (await fileIn(await sub(['blobs']), (await pointer.text()).trim()));
      if (!blob) throw new Error(`${file} is not in the cache`);
      return blob.text();
    },
    async hasBlob(etag) {
      return (await fileIn(await sub(['blobs']), etag)) !== null;
    },
    async partialSize(etag) {
      return (await fileIn(await sub(['blobs']), `${etag}.incomplete`))?.size ?? 0;
    },
    async openPartial(etag, from): Promise<PartialWriter> {
      const handle = await (await blobs()).getFileHandle(safe(`${etag}.incomplete`), { create: true });
      let uncommitted = 0;
      const open = async (at: number) => {
        const writable = await handle.createWritable({ keepExistingData: at > 0 });
        await writable.truncate(at);
        await writable.seek(at);
        return writable;
      };
      let at = from;
      let writable = await open(from).catch((error) => {
        throw quotaError(error);
      });
      return {
        async write(chunk) {
          try {
            await writable.write(chunk as Uint8Array<ArrayBuffer>);
            at += chunk.length;
            uncommitted += chunk.length;
            if (uncommitted >= PARTIAL_COMMIT_BYTES) {
              await writable.close();
              writable = await open(at);
              uncommitted = 0;
            }
          } catch (error) {
            throw quotaError(error);
          }
        },
        async close() {
          await writable.close().catch(() => undefined);
        },
      };
    },
    async completePartial(etag, check) {
      const folder = await blobs();
      const partial = await fileIn(folder, `${etag}.incomplete`);
      if (!partial || partial.size !== check.size) throw new Error(`${partial?.size ?? 0} bytes arrived, the Hub gives ${check.size}`);
      if (check.sha256) {
        const got = await blobSha256(partial);
        if (got !== check.sha256) {
          await folder.removeEntry(safe(`${etag}.incomplete`));
          throw new Error(`the bytes that arrived hash to sha256 ${got}, the Hub gives ${check.sha256}; deleted, load again`);
        }
      }
      const handle = await folder.getFileHandle(safe(`${etag}.incomplete`));
      // FileSystemHandle.move (Chromium) renames in place; elsewhere the bytes are copied.
      const movable = handle as FileSystemFileHandle & { move?: (name: string) => Promise<void> };
      if (movable.move) await movable.move(safe(etag));
      else {
        await writeBlob(folder, etag, partial);
        await folder.removeEntry(safe(`${etag}.incomplete`));
      }
    },
    async link(commit, file, etag) {
      await writeFile((await sub(['snapshots', commit], true))!, file, etag);
    },
  };
}

/**
 * The SHA-256 of a blob of any size, read as a stream: memory stays at one chunk (WebCrypto's digest takes the
 * whole buffer, which a 1.2 GB safetensors file would be), and each chunk is a short task, so the page keeps
 * answering while a large file is checked.
 */
export async function blobSha256(blob: Blob): Promise<string> {
  const hash = sha256.create();
  const reader = blob.stream().getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hash.update(value);
  }
  return bytesToHex(hash.digest());
}

async function writeBlob(parent: FileSystemDirectoryHandle, name: string, blob: Blob): Promise<void> {
  try {
    const writable = await (await parent.getFileHandle(safe(name), { create: true })).createWritable();
    await writable.write(blob);
    await writable.close();
  } catch (error) {
    throw quotaError(error);
  }
}

/** A Hub model's files in the cache (downloaded first where needed), by name, as the scoring worker loads a folder. */
export async function hubModelFiles(ref: HubModelRef, options: HubOptions): Promise<Map<string, Blob>> {
  const store = await opfsHubStore(ref.repo);
  const { commit, files } = await fetchHubModel(ref, store, options);
  const repoDir = (await dir(await opfsRoot(), [repoFolderName(ref.repo)], false))!;
  const snapshot = await dir(repoDir, ['snapshots', commit], false);
  const blobs = await dir(repoDir, ['blobs'], false);
  const out = new Map<string, Blob>();
  for (const file of files) {
    const pointer = await fileIn(snapshot, file);
    const blob = pointer && (await fileIn(blobs, (await pointer.text()).trim()));
    if (!blob) throw new Error(`${file} went missing from the Hub cache: load again`);
    out.set(file, blob);
  }
  return out;
}

/** Bytes the Hub cache holds (whole files and partial ones). */
export async function hubCacheBytes(): Promise<number> {
  const walk = async (d: FileSystemDirectoryHandle): Promise<number> => {
    let n = 0;
    for await (const entry of (d as FileSystemDirectoryHandle & { values(): AsyncIterable<FileSystemHandle> }).values()) {
      if (entry.kind === 'file') n += (await (entry as FileSystemFileHandle).getFile()).size;
      else n += await walk(entry as FileSystemDirectoryHandle);
    }
    return n;
  };
  return walk(await opfsRoot());
}

/** Deletes every model the page keeps. */
export async function clearHubCache(): Promise<void> {
  await (await navigator.storage.getDirectory()).removeEntry(ROOT, { recursive: true });
}
