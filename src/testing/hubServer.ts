// A stand-in for the Hugging Face Hub on 127.0.0.1, for tests: `/ORG/NAME/resolve/REVISION/FILE` serves a
// folder on disk as the Hub does (small files directly with an ETag and X-Repo-Commit; safetensors by a 302 to
// a storage URL, the redirect carrying X-Linked-Etag = the file's sha256 and X-Linked-Size), byte ranges,
// the listing of a revision (`/api/models/ORG/NAME/tree/REV`, a large file's sha256 as lfs.oid), 404s and 401s
// with the Hub's X-Error-Code, a gated repository (401 without the right Bearer token), CORS for the
// page, a mode that cuts a file's body after N bytes, one that changes a byte of it, and a log of every request with the bytes it was sent.

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface HubServerRepo {
  /** The folder served (every regular file in it). */
  dir: string;
  /** When set, the repository is gated: only `Authorization: Bearer <token>` reads it (401 otherwise). */
  token?: string;
}

export interface HubRequestLog {
  method: string;
  path: string;
  range: string | null;
  authorization: string | null;
  status: number;
  /** Body bytes sent. */
  bytes: number;
}

export interface HubServer {
  endpoint: string;
  log: HubRequestLog[];
  /** The commit a repository's files are served at (main resolves to it). */
  commit(repo: string): string;
  /** The next GET of `file`'s bytes sends `bytes` of the body, then drops the connection (once). */
  cutNext(file: string, bytes: number): void;
  /** The next GET of `file`'s bytes sends them with one byte changed (once): what arrives no longer hashes to its sha256. */
  corruptNext(file: string): void;
  close(): Promise<void>;
}

interface Served {
  data: Uint8Array;
  sha256: string;
  gitSha1: string;
}

const LFS = /\.safetensors$/;

function load(dir: string): Map<string, Served> {
  const files = new Map<string, Served>();
  for (const name of readdirSync(dir).sort()) {
    if (!statSync(join(dir, name)).isFile()) continue;
    const data = new Uint8Array(readFileSync(join(dir, name)));
    const gitSha1 = createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
    files.set(name, { data, sha256: createHash('sha256').update(data).digest('hex'), gitSha1 });
  }
  return files;
}

/** Serves `repos` (by `ORG/NAME`) on 127.0.0.1 at a free port. */
export async function startHubServer(repos: Record<string, HubServerRepo>): Promise<HubServer> {
  const served = new Map(Object.entries(repos).map(([repo, r]) => [repo, { ...r, files: load(r.dir) }]));
  const commits = new Map<string, string>();
  for (const [repo, { files }] of served) {
    const hash = createHash('sha1').update(repo);
    for (const [name, f] of files) hash.update(`${name} ${f.gitSha1}\n`);
    commits.set(repo, hash.digest('hex'));
  }
  const log: HubRequestLog[] = [];
  const cuts = new Map<string, number>();
  const corrupt = new Set<string>();
  let endpoint = '';

  const send = (req: IncomingMessage, res: ServerResponse, status: number, headers: Record<string, string>, body: Uint8Array = new Uint8Array()) => {
    const entry: HubRequestLog = {
      method: req.method ?? '',
      path: req.url ?? '',
      range: req.headers.range ?? null,
      authorization: req.headers.authorization ?? null,
      status,
      bytes: 0,
    };
    log.push(entry);
    res.writeHead(status, headers);
    if (req.method === 'HEAD') return res.end();
    entry.bytes = body.length;
    res.end(body);
  };

  const cors = {
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'x-repo-commit, x-linked-etag, x-linked-size, x-error-code, etag, content-range, content-length, accept-ranges',
  };

  /** The bytes of one file, honouring `Range: bytes=N-[M]`, cut short when asked. */
  const body = (req: IncomingMessage, res: ServerResponse, name: string, file: Served, headers: Record<string, string>) => {
    const size = file.data.length;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    let begin = 0;
    let end = size;
    let status = 200;
    if (range) {
      begin = Number(range[1]);
      end = range[2] ? Math.min(size, Number(range[2]) + 1) : size;
      if (begin >= size) return send(req, res, 416, { ...headers, 'content-range': `bytes */${size}` });
      status = 206;
      headers['content-range'] = `bytes ${begin}-${end - 1}/${size}`;
    }
    headers['content-length'] = String(end - begin);
    headers['accept-ranges'] = 'bytes';
    const cut = req.method === 'GET' ? cuts.get(name) : undefined;
    if (cut === undefined && req.method === 'GET' && corrupt.delete(name)) {
      const changed = file.data.slice(begin, end);
      changed[changed.length >> 1] ^= 0xff;
      return send(req, res, status, headers, changed);
    }
    if (cut === undefined) return send(req, res, status, headers, file.data.subarray(begin, end));
    cuts.delete(name);
    const part = file.data.subarray(begin, Math.min(end, begin + cut));
    log.push({
      method: 'GET',
      path: req.url ?? '',
      range: req.headers.range ?? null,
      authorization: req.headers.authorization ?? null,
      status,
      bytes: part.length,
    });
    res.writeHead(status, headers);
    // Cut a moment after the bytes went out: a fetch drops the chunks it holds unread when its body errors, so the
    // client is given the time to take them (as on a real network, where a connection dies well after its last bytes).
    res.write(part, () => setTimeout(() => res.socket?.destroy(), 300));
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-headers': 'authorization, range', 'access-control-allow-methods': 'GET, HEAD' });
      return res.end();
    }
    const storage = /^\/storage\/([^/]+)\/([0-9a-f]{64})\/([^/]+)$/.exec(url.pathname);
    if (storage) {
      const repo = served.get(decodeURIComponent(storage[1]));
      const file = repo?.files.get(decodeURIComponent(storage[3]));
      if (!file || file.sha256 !== storage[2]) return send(req, res, 404, cors);
      return body(req, res, decodeURIComponent(storage[3]), file, { ...cors, etag: `"${file.sha256}"` });
    }
    const tree = /^\/api\/models\/(.+)\/tree\/([^/]+)$/.exec(url.pathname);
    if (tree) {
      // The Hub's listing of a revision: each file's git oid and size, and a large file's sha256 as lfs.oid.
      const [, repoName, revision] = tree.map(decodeURIComponent);
      const repo = served.get(repoName);
      if (!repo) return send(req, res, req.headers.authorization ? 404 : 401, { ...cors, 'x-error-code': 'RepoNotFound' });
      if (repo.token && req.headers.authorization !== `Bearer ${repo.token}`) return send(req, res, 401, { ...cors, 'x-error-code': 'GatedRepo' });
      const commit = commits.get(repoName)!;
      if (revision !== 'main' && revision !== commit) return send(req, res, 404, { ...cors, 'x-error-code': 'RevisionNotFound' });
      const entries = [...repo.files].map(([path, f]) => ({
        type: 'file',
        oid: f.gitSha1,
        size: f.data.length,
        ...(LFS.test(path) ? { lfs: { oid: f.sha256, size: f.data.length, pointerSize: 134 } } : {}),
        path,
      }));
      return send(req, res, 200, { ...cors, 'content-type': 'application/json' }, new TextEncoder().encode(JSON.stringify(entries)));
    }
    const resolve = /^\/(.+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    if (!resolve) return send(req, res, 404, cors);
    const [, repoName, revision, fileName] = resolve.map(decodeURIComponent);
    const repo = served.get(repoName);
    // As the Hub: a model it does not show is 401 without a token (a private one looks the same), 404 with one.
    if (!repo) return send(req, res, req.headers.authorization ? 404 : 401, { ...cors, 'x-error-code': 'RepoNotFound' });
    if (repo.token && req.headers.authorization !== `Bearer ${repo.token}`) return send(req, res, 401, { ...cors, 'x-error-code': 'GatedRepo' });
    const commit = commits.get(repoName)!;
    if (revision !== 'main' && revision !== commit) return send(req, res, 404, { ...cors, 'x-error-code': 'RevisionNotFound' });
    const file = repo.files.get(fileName);
    if (!file) return send(req, res, 404, { ...cors, 'x-error-code': 'EntryNotFound', 'x-repo-commit': commit });
    const headers: Record<string, string> = { ...cors, 'x-repo-commit': commit };
    if (LFS.test(fileName)) {
      return send(req, res, 302, {
        ...headers,
        etag: `"${file.sha256}"`,
        'x-linked-etag': `"${file.sha256}"`,
        'x-linked-size': String(file.data.length),
        location: `${endpoint}/storage/${encodeURIComponent(repoName)}/${file.sha256}/${encodeURIComponent(fileName)}`,
      });
    }
    return body(req, res, fileName, file, { ...headers, etag: `"${file.gitSha1}"` });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    log,
    commit: (repo) => commits.get(repo)!,
    cutNext(file, bytes) {
      cuts.set(file, bytes);
    },
    corruptNext(file) {
      corrupt.add(file);
    },
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
