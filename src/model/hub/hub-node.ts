// The Hub's cache on disk, in the layout the Hub's own clients share (models--ORG--NAME/{blobs,snapshots,refs},
// .no_exist for files known absent, BLOB.incomplete for a download cut short), so a model one of them fetched
// is found here and the other way round. `hubModelFolder` loads `hf:ORG/NAME[@REV]` and returns the snapshot
// folder, which opens like any model folder.

import { createHash } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { HubCacheError, type HubModelRef, type HubOptions, type HubStore, fetchHubModel } from './hub';

/**
 * Where models are cached: $HF_HUB_CACHE, else $HF_HOME/hub, else $MW_CACHE_DIR/models, else the Hub's
 * default ~/.cache/huggingface/hub (shared with the Hub's Python library).
 */
export function hubCacheDir(env: Record<string, string | undefined> = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, 'hub');
  if (env.MW_CACHE_DIR) return join(env.MW_CACHE_DIR, 'models');
  return join(homedir(), '.cache', 'huggingface', 'hub');
}

/** The repository's folder in the cache: `models--ORG--NAME`. */
export function hubRepoDir(cache: string, repo: string): string {
  return join(cache, `models--${repo.replace(/\//g, '--')}`);
}

/** A disk's refusal (full, quota, read-only) as one line naming the path. */
function diskError(path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === 'ENOSPC') return new HubCacheError(`no space left on the disk for ${path} (the part written is kept; free space and load again)`);
  if (code === 'EDQUOT') return new HubCacheError(`disk quota exceeded writing ${path} (the part written is kept; free space and load again)`);
  if (code === 'EACCES' || code === 'EROFS' || code === 'EPERM')
    return new HubCacheError(`cannot write ${path} (${code}); set HF_HUB_CACHE to a writable folder`);
  return error as Error;
}

export function nodeHubStore(repoDir: string): HubStore {
  const blob = (etag: string) => join(repoDir, 'blobs', etag);
  const snapshot = (commit: string, file: string) => join(repoDir, 'snapshots', commit, file);
  const noExist = (commit: string, file: string) => join(repoDir, '.no_exist', commit, file);
  const write = (path: string, text: string) => {
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
    } catch (error) {
      throw diskError(path, error);
    }
  };
  return {
    async readRef(revision) {
      const path = join(repoDir, 'refs', revision);
      return existsSync(path) ? readFileSync(path, 'utf8').trim() || null : null;
    },
    async writeRef(revision, commit) {
      write(join(repoDir, 'refs', revision), commit);
    },
    async fileState(commit, file) {
      // statSync follows the snapshot's link: a link to a missing blob is no file.
      if (existsSync(snapshot(commit, file)) && statSync(snapshot(commit, file)).isFile()) return 'present';
      return existsSync(noExist(commit, file)) ? 'absent' : 'unknown';
    },
    async markAbsent(commit, file) {
      write(noExist(commit, file), '');
    },
    async readText(commit, file) {
      return readFileSync(snapshot(commit, file), 'utf8');
    },
    async hasBlob(etag) {
      return existsSync(blob(etag));
    },
    async partialSize(etag) {
      const path = `${blob(etag)}.incomplete`;
      return existsSync(path) ? statSync(path).size : 0;
    },
    async openPartial(etag, from) {
      const path = `${blob(etag)}.incomplete`;
      try {
        mkdirSync(dirname(path), { recursive: true });
      } catch (error) {
        throw diskError(path, error);
      }
      const handle = await open(path, from > 0 ? 'r+' : 'w').catch((error) => {
        throw diskError(path, error);
      });
      if (from > 0) await handle.truncate(from);
      let at = from;
      return {
        async write(chunk) {
          try {
            let done = 0;
            while (done < chunk.length) done += (await handle.write(chunk, done, chunk.length - done, at + done)).bytesWritten;
            at += chunk.length;
          } catch (error) {
            throw diskError(path, error);
          }
        },
        close: () => handle.close(),
      };
    },
    async completePartial(etag, check) {
      const path = `${blob(etag)}.incomplete`;
      const size = existsSync(path) ? statSync(path).size : 0;
      if (size !== check.size) throw new Error(`${size} bytes arrived, the Hub gives ${check.size}`);
      if (check.sha256) {
        const hash = createHash('sha256');
        for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
        const got = hash.digest('hex');
        if (got !== check.sha256) {
          rmSync(path, { force: true });
          throw new Error(`the bytes that arrived hash to sha256 ${got}, the Hub gives ${check.sha256}; deleted, load again`);
        }
      }
      renameSync(path, blob(etag));
    },
    async link(commit, file, etag) {
      const path = snapshot(commit, file);
      try {
        mkdirSync(dirname(path), { recursive: true });
        if (existsSync(path) || isLink(path)) rmSync(path, { force: true });
        symlinkSync(relative(dirname(path), blob(etag)), path);
      } catch (error) {
        throw diskError(path, error);
      }
    },
  };
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** The snapshot folder of `ref` in the cache, downloaded first where it is not whole there. */
export async function hubModelFolder(ref: HubModelRef, options: HubOptions & { cacheDir?: string } = {}): Promise<string> {
  const repoDir = hubRepoDir(options.cacheDir ?? hubCacheDir(), ref.repo);
  const { commit } = await fetchHubModel(ref, nodeHubStore(repoDir), options);
  return join(repoDir, 'snapshots', commit);
}
