// A model folder from the Hugging Face Hub by name (`hf:ORG/NAME[@REVISION]`), over plain fetch, for Node
// and the page alike: config.json, the tokenizer's files, the index and the safetensors (shards through
// the index) from `${endpoint}/ORG/NAME/resolve/REVISION/FILE`, into a cache (a HubStore: the Hub's own
// cache layout on disk, OPFS in the page). A partial file is resumed with a Range request, never used; a
// cached snapshot loads with no request at all. Every failure is one line (HubError).

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

/** The files read besides the weights; each may be absent. */
export const OPTIONAL_FILES = ['tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'chat_template.jinja'] as const;
const INDEX = 'model.safetensors.index.json';
const SINGLE = 'model.safetensors';

export interface HubModelRef {
  /** `ORG/NAME` (or a bare legacy `NAME`). */
  repo: string;
  /** A branch, tag or commit; `main` when not given. */
  revision: string;
}

const REF = /^hf:((?:[A-Za-z0-9][\w.-]*\/)?[A-Za-z0-9][\w.-]*)(?:@(\S+))?$/;

/** `hf:ORG/NAME[@REV]` as a reference, or null when the text is not one. */
export function parseHubRef(text: string): HubModelRef | null {
  const match = REF.exec(text.trim());
  return match ? { repo: match[1], revision: match[2] ?? 'main' } : null;
}

export function formatHubRef(ref: HubModelRef): string {
  return `hf:${ref.repo}${ref.revision === 'main' ? '' : `@${ref.revision}`}`;
}

const COMMIT = /^[0-9a-f]{40}$/;

/** One line: what failed, for which model, and what to do. */
export class HubError extends Error {
  override readonly name = 'HubError';
  constructor(
    readonly ref: string,
    readonly reason: string,
  ) {
    super(`${ref}: ${reason}`);
  }
}

/** The cache's refusal (a full disk or quota, a folder that cannot be written): one line, turned into a HubError. */
export class HubCacheError extends Error {
  override readonly name = 'HubCacheError';
}

/** Progress in bytes: `bytes` of `total` are in the cache, `fetched` of them came over the network in this load. */
export interface HubProgress {
  file: string;
  bytes: number;
  total: number;
  fetched: number;
}

export interface HubOptions {
  /** The Hub's address (HF_ENDPOINT); DEFAULT_HUB_ENDPOINT when not given. */
  endpoint?: string;
  /** A user access token, sent as `Authorization: Bearer` to the endpoint only. */
  token?: string;
  /** How the user gives a token, for the 401 / 403 lines ("set HF_TOKEN to a token", "enter an access token"). */
  tokenHint?: string;
  fetch?: typeof fetch;
  /** Load from the store only: a model not whole there is refused, and nothing is requested. */
  cachedOnly?: boolean;
  /** Only config.json and the tokenizer's files (mw import --tokenizer hf:…): no weights. */
  tokenizerOnly?: boolean;
  onProgress?(progress: HubProgress): void;
}

/** A partial file being written: appended to, then closed. */
export interface PartialWriter {
  write(chunk: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where downloaded files live. Blobs are keyed by the Hub's ETag (a file shared by two revisions is kept
 * once); a snapshot names, per commit, each file's blob, or records that the file does not exist.
 */
export interface HubStore {
  readRef(revision: string): Promise<string | null>;
  writeRef(revision: string, commit: string): Promise<void>;
  /** `present`: in the snapshot; `absent`: known not to exist at that commit; `unknown`: never asked. */
  fileState(commit: string, file: string): Promise<'present' | 'absent' | 'unknown'>;
  markAbsent(commit: string, file: string): Promise<void>;
  readText(commit: string, file: string): Promise<string>;
  hasBlob(etag: string): Promise<boolean>;
  /** Bytes kept of an interrupted download of blob `etag` (0 when none). */
  partialSize(etag: string): Promise<number>;
  /** A writer appending at `from` (0: the partial is started over). */
  openPartial(etag: string, from: number): Promise<PartialWriter>;
  /** The partial is whole: checked (size, sha256 where the Hub gives it), made the blob; a failed check deletes it and throws the reason. */
  completePartial(etag: string, check: { size: number; sha256: string | null }): Promise<void>;
  /** Names blob `etag` as `file` in the snapshot of `commit`. */
  link(commit: string, file: string, etag: string): Promise<void>;
}

/** What the Hub says of one file: its commit, blob key, size, sha256 (large files) and where its bytes are. */
interface FileMeta {
  commit: string;
  etag: string;
  size: number;
  sha256: string | null;
  url: string;
}

function stripEtag(value: string | null): string | null {
  if (!value) return null;
  return value.replace(/^W\//, '').replace(/^"|"$/g, '') || null;
}

function fileUrl(endpoint: string, ref: HubModelRef, revision: string, file: string): string {
  return `${endpoint.replace(/\/+$/, '')}/${ref.repo}/resolve/${encodeURIComponent(revision)}/${file.split('/').map(encodeURIComponent).join('/')}`;
}

function networkReason(endpoint: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error);
  return `cannot reach ${endpoint} (${why}); check the connection or HF_ENDPOINT`;
}

/**
 * Loads `ref` into `store` and returns the commit and the snapshot's files, in the order a folder reader
 * wants them. With the snapshot already whole in the store, nothing is requested.
 */
export async function fetchHubModel(ref: HubModelRef, store: HubStore, options: HubOptions = {}): Promise<{ commit: string; files: string[] }> {
  try {
    return await fetchInto(ref, store, options);
  } catch (error) {
    if (error instanceof HubCacheError) throw new HubError(formatHubRef(ref), error.message);
    throw error;
  }
}

async function fetchInto(ref: HubModelRef, store: HubStore, options: HubOptions): Promise<{ commit: string; files: string[] }> {
  const name = formatHubRef(ref);
  const cachedCommit = COMMIT.test(ref.revision) ? ref.revision : await store.readRef(ref.revision);
  if (cachedCommit) {
    const files = await snapshotFiles(store, cachedCommit, options.tokenizerOnly === true);
    if (files) return { commit: cachedCommit, files };
  }
  if (options.cachedOnly) throw new HubError(name, 'not in the cache (cleared, or never loaded whole): load it again');

  const endpoint = (options.endpoint || DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
  let origin: string;
  try {
    origin = new URL(endpoint).origin;
  } catch {
    throw new HubError(name, `the Hub's address ${JSON.stringify(endpoint)} is not a URL (HF_ENDPOINT)`);
  }
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const hint = options.tokenHint ?? 'set HF_TOKEN to a token';
  const headersFor = (url: string, extra: Record<string, string> = {}): Record<string, string> =>
    options.token && new URL(url).origin === origin ? { ...extra, authorization: `Bearer ${options.token}` } : extra;

  const request = async (url: string, init: RequestInit): Promise<Response> => {
    try {
      // no-store: a browser's HTTP cache must not answer a Range request, nor keep a copy of every shard.
      return await doFetch(url, { ...init, cache: 'no-store' });
    } catch (error) {
      throw new HubError(name, networkReason(endpoint, error));
    }
  };

  const refuse = (response: Response, file: string, revision: string): HubError => {
    const code = response.headers.get('x-error-code');
    const status = response.status;
    // The Hub answers a model it does not show with 401 RepoNotFound when no token is sent (a private model
    // looks the same from outside), 404 with one.
    if (status === 401 && code === 'RepoNotFound')
      return new HubError(
        name,
        options.token
          ? `no such model on ${endpoint}, or the token cannot read it (401)`
          : `no such model on ${endpoint}, or it is private (401): check the id, or ${hint} that can read it`,
      );
    if (status === 401)
      return new HubError(
        name,
        options.token
          ? `the token is not accepted (401): it cannot read this gated or private model`
          : `the model is gated or private (401): ${hint} that can read it`,
      );
    if (status === 403) return new HubError(name, `access denied (403): the model is gated; accept its conditions on the Hub, then ${hint}`);
    if (status === 404) {
      if (code === 'RepoNotFound') return new HubError(name, `no such model on ${endpoint} (404)`);
      if (code === 'RevisionNotFound') return new HubError(name, `no revision "${revision}" (404)`);
      return new HubError(name, `no file ${file} at revision ${revision} (404)`);
    }
    return new HubError(name, `${file}: HTTP ${status} from ${endpoint}`);
  };

  // A browser follows the redirect to a large file's storage and never shows its X-Linked-Etag: there the sha256s
  // come from the Hub's listing of the revision (`/api/models/ORG/NAME/tree/REV`, `lfs.oid` of each large file),
  // asked once per load. Without an answer the files are checked by size only.
  const listed = new Map<string, Promise<Map<string, string>>>();
  const listedSha256 = (revision: string, file: string): Promise<string | null> => {
    if (!listed.has(revision)) {
      const url = `${endpoint}/api/models/${ref.repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
      listed.set(
        revision,
        request(url, { headers: headersFor(url) })
          .then(async (response) => {
            const shas = new Map<string, string>();
            if (!response.ok) return shas;
            const entries = (await response.json()) as { path?: unknown; lfs?: { oid?: unknown } }[];
            for (const entry of Array.isArray(entries) ? entries : [])
              if (typeof entry?.path === 'string' && typeof entry.lfs?.oid === 'string' && /^[0-9a-f]{64}$/.test(entry.lfs.oid))
                shas.set(entry.path, entry.lfs.oid);
            return shas;
          })
          .catch(() => new Map<string, string>()),
      );
    }
    return listed.get(revision)!.then((shas) => shas.get(file) ?? null);
  };

  /** The file's metadata, or null when it does not exist at that revision (404 EntryNotFound) and `optional`. */
  const head = async (file: string, revision: string, optional: boolean): Promise<FileMeta | null> => {
    const url = fileUrl(endpoint, ref, revision, file);
    // Manual redirects keep the Hub's own headers on large files (the redirect to their storage carries
    // X-Linked-Etag / X-Linked-Size); a browser hides a manual redirect, so there the redirect is followed.
    let response = await request(url, { method: 'HEAD', redirect: 'manual', headers: headersFor(url) });
    let location = url;
    let followed = false;
    if (response.type === 'opaqueredirect') {
      response = await request(url, { method: 'HEAD', headers: headersFor(url) });
      location = response.url || url;
      followed = location !== url;
    } else if (response.status >= 300 && response.status < 400 && response.headers.get('location')) {
      location = new URL(response.headers.get('location')!, url).toString();
      if (new URL(location).origin === origin && !response.headers.get('x-linked-size')) {
        // A renamed repository answers with a redirect on the Hub itself: ask again there.
        response = await request(location, { method: 'HEAD', redirect: 'manual', headers: headersFor(location) });
      }
    }
    if (!response.ok && !(response.status >= 300 && response.status < 400)) {
      if (optional && response.status === 404 && response.headers.get('x-error-code') === 'EntryNotFound') return null;
      throw refuse(response, file, revision);
    }
    const h = response.headers;
    const linked = stripEtag(h.get('x-linked-etag'));
    const size = Number(h.get('x-linked-size') ?? h.get('content-length'));
    const commit = h.get('x-repo-commit') ?? (COMMIT.test(revision) ? revision : null);
    if (!commit) throw new HubError(name, `${file}: the answer from ${endpoint} names no commit (X-Repo-Commit): not the Hub's resolve endpoint?`);
    if (!Number.isSafeInteger(size) || size < 0) throw new HubError(name, `${file}: the answer from ${endpoint} gives no size`);
    const etag = linked ?? stripEtag(h.get('etag')) ?? `${commit}-${file.replace(/\//g, '--')}`;
    const sha256 = linked && /^[0-9a-f]{64}$/.test(linked) ? linked : followed ? await listedSha256(commit, file) : null;
    return { commit, etag, size, sha256, url: location };
  };

  // config.json first: its answer names the commit every other file is read at.
  const config = (await head('config.json', ref.revision, false))!;
  const commit = config.commit;
  const metas = new Map<string, FileMeta>([['config.json', config]]);
  const wanted = async (file: string): Promise<boolean> => {
    const state = await store.fileState(commit, file);
    if (state === 'absent') return false;
    if (state === 'present') return true;
    const meta = await head(file, commit, true);
    if (!meta) {
      await store.markAbsent(commit, file);
      return false;
    }
    metas.set(file, meta);
    return true;
  };

  let progressed = 0;
  let fetched = 0;
  let total = 0;
  let reported = -1;
  const report = (file: string) => {
    if (progressed === reported) return; // once per change of the figure
    reported = progressed;
    options.onProgress?.({ file, bytes: progressed, total, fetched });
  };

  const download = async (file: string) => {
    const meta = metas.get(file);
    if (!meta) return; // already in the snapshot
    if (await store.hasBlob(meta.etag)) {
      await store.link(commit, file, meta.etag);
      progressed += meta.size;
      report(file);
      return;
    }
    let from = await store.partialSize(meta.etag);
    if (from > meta.size) from = 0;
    progressed += from;
    if (from < meta.size) {
      const response = await request(meta.url, { headers: headersFor(meta.url, from > 0 ? { range: `bytes=${from}-` } : {}) });
      if (!response.ok) throw refuse(response, file, commit);
      if (response.status !== 206 && from > 0) {
        // The server sent the whole file: start over.
        progressed -= from;
        from = 0;
      } else if (response.status === 206) {
        const range = /^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '');
        if (!range || Number(range[1]) !== from)
          throw new HubError(name, `${file}: the server resumed at the wrong byte (${response.headers.get('content-range')})`);
      }
      const writer = await store.openPartial(meta.etag, from);
      let at = from;
      try {
        const reader = response.body!.getReader();
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch {
            throw new HubError(name, `connection lost after ${at} of ${meta.size} bytes of ${file}; the part that arrived is kept: load again to resume`);
          }
          if (chunk.done) break;
          if (at + chunk.value.length > meta.size) throw new HubError(name, `${file}: the server sent more than its ${meta.size} bytes`);
          await writer.write(chunk.value);
          at += chunk.value.length;
          progressed += chunk.value.length;
          fetched += chunk.value.length;
          report(file);
        }
      } finally {
        await writer.close();
      }
      if (at < meta.size)
        throw new HubError(name, `connection lost after ${at} of ${meta.size} bytes of ${file}; the part that arrived is kept: load again to resume`);
    }
    try {
      await store.completePartial(meta.etag, { size: meta.size, sha256: meta.sha256 });
    } catch (error) {
      if (error instanceof HubCacheError) throw error;
      throw new HubError(name, `${file}: ${(error as Error).message}`);
    }
    await store.link(commit, file, meta.etag);
    report(file);
  };

  const sizeOf = (file: string) => metas.get(file)?.size ?? 0;
  const files = ['config.json'];
  for (const file of OPTIONAL_FILES) if (await wanted(file)) files.push(file);
  if (options.tokenizerOnly) {
    total = files.reduce((n, f) => n + sizeOf(f), 0);
    for (const file of files) await download(file);
    if (!COMMIT.test(ref.revision)) await store.writeRef(ref.revision, commit);
    return { commit, files };
  }
  let shards: string[];
  if (await wanted(INDEX)) {
    files.push(INDEX);
    total = sizeOf(INDEX);
    await download(INDEX);
    shards = indexShards(await store.readText(commit, INDEX), name);
    for (const shard of shards) if ((await store.fileState(commit, shard)) !== 'present') metas.set(shard, (await head(shard, commit, false))!);
  } else {
    if (!(await wanted(SINGLE))) throw new HubError(name, `no ${SINGLE} and no ${INDEX} at revision ${ref.revision} (not a safetensors model)`);
    shards = [SINGLE];
  }
  files.push(...shards);
  total = progressed + files.filter((f) => f !== INDEX).reduce((n, f) => n + sizeOf(f), 0);
  for (const file of files) if (file !== INDEX) await download(file);
  if (!COMMIT.test(ref.revision)) await store.writeRef(ref.revision, commit);
  return { commit, files };
}

function indexShards(text: string, name: string): string[] {
  let map: unknown;
  try {
    map = (JSON.parse(text) as { weight_map?: unknown }).weight_map;
  } catch (error) {
    throw new HubError(name, `${INDEX}: not JSON (${(error as Error).message})`);
  }
  if (typeof map !== 'object' || map === null) throw new HubError(name, `${INDEX}: no "weight_map" object`);
  const shards = [...new Set(Object.values(map as Record<string, unknown>))];
  if (shards.some((s) => typeof s !== 'string' || s.includes('..') || s.startsWith('/')))
    throw new HubError(name, `${INDEX}: weight_map names a shard that is not a file name`);
  return (shards as string[]).sort();
}

/** The snapshot's files when it is whole (every file the load reads present, or known absent), else null. */
async function snapshotFiles(store: HubStore, commit: string, tokenizerOnly: boolean): Promise<string[] | null> {
  if ((await store.fileState(commit, 'config.json')) !== 'present') return null;
  const files = ['config.json'];
  for (const file of OPTIONAL_FILES) {
    const state = await store.fileState(commit, file);
    if (state === 'unknown') return null;
    if (state === 'present') files.push(file);
  }
  if (tokenizerOnly) return files;
  const index = await store.fileState(commit, INDEX);
  if (index === 'unknown') return null;
  let shards = [SINGLE];
  if (index === 'present') {
    files.push(INDEX);
    try {
      shards = indexShards(await store.readText(commit, INDEX), commit);
    } catch {
      return null;
    }
  }
  for (const shard of shards) if ((await store.fileState(commit, shard)) !== 'present') return null;
  return [...files, ...shards];
}
