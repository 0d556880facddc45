// The Hub client against a stand-in Hub on 127.0.0.1 (src/testing/hubServer.ts) serving tiny family folders:
// the first load fetches every file into the Hub's cache layout with progress in bytes, the second makes no
// request, a download cut mid-file resumes with a Range request for the rest only, the Hub's sha256 is
// checked, and 404 / 401 / a lost connection each end in one line.

import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFamilyFolder } from '../../testing/familyFolders';
import { type HubServer, startHubServer } from '../../testing/hubServer';
import { tmpDir } from '../../cli/subprocess.testing';
import { type HubProgress, parseHubRef } from './hub';
import { hubCacheDir, hubModelFolder, hubRepoDir } from './hub-node';

const TMP = tmpDir('hub');
let hub: HubServer;
const qwen3 = join(TMP, 'qwen3');
const llama = join(TMP, 'llama');

beforeAll(async () => {
  writeFamilyFolder(qwen3, 'qwen3', 3);
  writeFamilyFolder(llama, 'llama', 4);
  hub = await startHubServer({
    'tiny/qwen3': { dir: qwen3 },
    'tiny/llama-sharded': { dir: llama },
    'tiny/gated': { dir: qwen3, token: 'hf_secret' },
  });
});
afterAll(async () => {
  await hub.close();
  rmSync(TMP, { recursive: true, force: true });
});

const size = (dir: string, file: string) => statSync(join(dir, file)).size;
const QWEN3_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'];

describe('parseHubRef', () => {
  it('reads hf:ORG/NAME[@REV] and nothing else', () => {
    expect(parseHubRef('hf:Qwen/Qwen3-0.6B')).toEqual({ repo: 'Qwen/Qwen3-0.6B', revision: 'main' });
    expect(parseHubRef('hf:HuggingFaceTB/SmolLM2-135M-Instruct@v1.0')).toEqual({ repo: 'HuggingFaceTB/SmolLM2-135M-Instruct', revision: 'v1.0' });
    expect(parseHubRef('hf:gpt2')).toEqual({ repo: 'gpt2', revision: 'main' });
    for (const text of ['Qwen/Qwen3-0.6B', 'hf:', 'hf:a/b/c', 'hf:../x', 'models/x']) expect(parseHubRef(text), text).toBeNull();
  });

  it('the cache is $HF_HUB_CACHE, else $HF_HOME/hub, else $MW_CACHE_DIR/models', () => {
    expect(hubCacheDir({ HF_HUB_CACHE: '/a', HF_HOME: '/b', MW_CACHE_DIR: '/c' })).toBe('/a');
    expect(hubCacheDir({ HF_HOME: '/b', MW_CACHE_DIR: '/c' })).toBe('/b/hub');
    expect(hubCacheDir({ MW_CACHE_DIR: '/c' })).toBe('/c/models');
    expect(hubRepoDir('/a', 'Qwen/Qwen3-0.6B')).toBe('/a/models--Qwen--Qwen3-0.6B');
  });
});

describe('hubModelFolder (Node, the Hub cache layout)', () => {
  it('the first load fetches every file with progress in bytes; the second makes no request', async () => {
    const cacheDir = join(TMP, 'cache-first');
    const progress: HubProgress[] = [];
    const before = hub.log.length;
    const dir = await hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir, onProgress: (p) => progress.push(p) });
    const commit = hub.commit('tiny/qwen3');
    const repoDir = hubRepoDir(cacheDir, 'tiny/qwen3');
    expect(dir).toBe(join(repoDir, 'snapshots', commit));
    expect(readFileSync(join(repoDir, 'refs', 'main'), 'utf8')).toBe(commit);
    for (const file of QWEN3_FILES) expect(readFileSync(join(dir, file)).equals(readFileSync(join(qwen3, file))), file).toBe(true);
    // The weights' blob is named by its sha256 (the Hub's X-Linked-Etag), linked from the snapshot.
    expect(lstatSync(join(dir, 'model.safetensors')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(dir, 'model.safetensors'))).toMatch(/^\.\.\/\.\.\/blobs\/[0-9a-f]{64}$/);
    expect(existsSync(join(repoDir, '.no_exist', commit, 'chat_template.jinja'))).toBe(true);
    expect(existsSync(join(repoDir, '.no_exist', commit, 'model.safetensors.index.json'))).toBe(true);
    const total = QWEN3_FILES.reduce((n, f) => n + size(qwen3, f), 0);
    const last = progress.at(-1)!;
    expect(last).toEqual({ file: 'model.safetensors', bytes: total, total, fetched: total });
    expect(progress.every((p, i) => i === 0 || p.bytes >= progress[i - 1].bytes)).toBe(true);
    const requests = hub.log.length - before;
    expect(requests).toBeGreaterThan(0);

    const again = await hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir });
    expect(again).toBe(dir);
    expect(hub.log.length - before).toBe(requests); // not one request
    // A commit named outright loads from the cache too.
    expect(await hubModelFolder(parseHubRef(`hf:tiny/qwen3@${commit}`)!, { endpoint: hub.endpoint, cacheDir })).toBe(dir);
    expect(hub.log.length - before).toBe(requests);
    // From the cache only (the page's start): a model not whole there is refused without a request.
    expect(await hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir, cachedOnly: true })).toBe(dir);
    await expect(
      hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir: join(TMP, 'cache-none'), cachedOnly: true }),
    ).rejects.toThrow('hf:tiny/qwen3: not in the cache (cleared, or never loaded whole): load it again');
    expect(hub.log.length - before).toBe(requests);
  });

  it('a sharded model: the index, then each shard it names; a shard already cached under another commit is not fetched again', async () => {
    const cacheDir = join(TMP, 'cache-sharded');
    const dir = await hubModelFolder(parseHubRef('hf:tiny/llama-sharded')!, { endpoint: hub.endpoint, cacheDir });
    for (const file of ['model.safetensors.index.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'])
      expect(readFileSync(join(dir, file)).equals(readFileSync(join(llama, file))), file).toBe(true);
    expect(existsSync(join(dir, 'model.safetensors'))).toBe(false);
  });

  it('a download cut mid-file is kept, then resumed with a Range request for the rest only', async () => {
    const cacheDir = join(TMP, 'cache-resume');
    const whole = size(qwen3, 'model.safetensors');
    hub.cutNext('model.safetensors', 1000);
    const options = { endpoint: hub.endpoint, cacheDir };
    await expect(hubModelFolder(parseHubRef('hf:tiny/qwen3')!, options)).rejects.toThrow(
      `hf:tiny/qwen3: connection lost after 1000 of ${whole} bytes of model.safetensors; the part that arrived is kept: load again to resume`,
    );
    const blobs = join(hubRepoDir(cacheDir, 'tiny/qwen3'), 'blobs');
    const sha = readFileSync(join(qwen3, 'model.safetensors'));
    const partial = join(blobs, `${createHash('sha256').update(sha).digest('hex')}.incomplete`);
    expect(statSync(partial).size).toBe(1000);
    // No ref yet: a partial snapshot is never used.
    expect(existsSync(join(hubRepoDir(cacheDir, 'tiny/qwen3'), 'refs', 'main'))).toBe(false);

    const before = hub.log.length;
    const dir = await hubModelFolder(parseHubRef('hf:tiny/qwen3')!, options);
    const gets = hub.log.slice(before).filter((r) => r.method === 'GET' && r.path.endsWith('/model.safetensors'));
    expect(gets.map((r) => [r.range, r.status, r.bytes])).toEqual([['bytes=1000-', 206, whole - 1000]]);
    expect(readFileSync(join(dir, 'model.safetensors')).equals(sha)).toBe(true);
    expect(existsSync(partial)).toBe(false);
  });

  it("bytes that do not hash to the Hub's sha256 are deleted, never used", async () => {
    const cacheDir = join(TMP, 'cache-corrupt');
    const data = readFileSync(join(qwen3, 'model.safetensors'));
    const sha = createHash('sha256').update(data).digest('hex');
    const blobs = join(hubRepoDir(cacheDir, 'tiny/qwen3'), 'blobs');
    mkdirSync(blobs, { recursive: true });
    const wrong = Buffer.from(data.subarray(0, 500));
    wrong[100] ^= 0xff;
    writeFileSync(join(blobs, `${sha}.incomplete`), wrong);
    await expect(hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir })).rejects.toThrow(
      /^hf:tiny\/qwen3: model\.safetensors: the bytes that arrived hash to sha256 [0-9a-f]{64}, the Hub gives [0-9a-f]{64}; deleted, load again$/,
    );
    expect(existsSync(join(blobs, `${sha}.incomplete`))).toBe(false);
    expect(existsSync(join(blobs, sha))).toBe(false);
  });

  it.skipIf(!existsSync('/dev/full'))('a full disk is one line naming the file being written', async () => {
    // The weights' partial file is a link to /dev/full: every write to it fails with ENOSPC, as on a full disk.
    const cacheDir = join(TMP, 'cache-full');
    const sha = createHash('sha256')
      .update(readFileSync(join(qwen3, 'model.safetensors')))
      .digest('hex');
    const blobs = join(hubRepoDir(cacheDir, 'tiny/qwen3'), 'blobs');
    mkdirSync(blobs, { recursive: true });
    symlinkSync('/dev/full', join(blobs, `${sha}.incomplete`));
    await expect(hubModelFolder(parseHubRef('hf:tiny/qwen3')!, { endpoint: hub.endpoint, cacheDir })).rejects.toThrow(
      `hf:tiny/qwen3: no space left on the disk for ${join(blobs, `${sha}.incomplete`)} (the part written is kept; free space and load again)`,
    );
  });

  it('404 (no model, no revision), 401 (gated, no token or a wrong one) and a lost connection are one line each; a token is sent as Bearer', async () => {
    const cacheDir = join(TMP, 'cache-errors');
    const load = (id: string, extra: { token?: string; endpoint?: string; cacheDir?: string } = {}) =>
      hubModelFolder(parseHubRef(id)!, { endpoint: hub.endpoint, cacheDir, ...extra });
    await expect(load('hf:tiny/nothing')).rejects.toThrow(
      `hf:tiny/nothing: no such model on ${hub.endpoint}, or it is private (401): check the id, or set HF_TOKEN to a token that can read it`,
    );
    await expect(load('hf:tiny/nothing', { token: 'hf_secret' })).rejects.toThrow(`hf:tiny/nothing: no such model on ${hub.endpoint} (404)`);
    await expect(load('hf:tiny/qwen3@v9')).rejects.toThrow('hf:tiny/qwen3@v9: no revision "v9" (404)');
    await expect(load('hf:tiny/gated')).rejects.toThrow('hf:tiny/gated: the model is gated or private (401): set HF_TOKEN to a token that can read it');
    await expect(load('hf:tiny/gated', { token: 'hf_wrong' })).rejects.toThrow(
      'hf:tiny/gated: the token is not accepted (401): it cannot read this gated or private model',
    );
    const before = hub.log.length;
    await load('hf:tiny/gated', { token: 'hf_secret' });
    expect(hub.log.slice(before).every((r) => r.authorization === 'Bearer hf_secret')).toBe(true);

    const port = await new Promise<number>((done) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    await expect(load('hf:tiny/qwen3', { endpoint: '127.0.0.1 nowhere', cacheDir: join(TMP, 'cache-offline') })).rejects.toThrow(
      `hf:tiny/qwen3: the Hub's address "127.0.0.1 nowhere" is not a URL (HF_ENDPOINT)`,
    );
    await expect(load('hf:tiny/qwen3', { endpoint: `http://127.0.0.1:${port}`, cacheDir: join(TMP, 'cache-offline') })).rejects.toThrow(
      `hf:tiny/qwen3: cannot reach http://127.0.0.1:${port} (ECONNREFUSED); check the connection or HF_ENDPOINT`,
    );
  });
});
