// The CLI's Hub argument in-process against a stand-in Hub on 127.0.0.1: progress on stderr in bytes with an ETA
// (one line rewritten in place on a terminal; off a terminal only for a download of 64 MiB or more), nothing
// printed for a cached model, a bad id a usage error, and the Hub's refusals one line naming the model.

import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../rollout/errors';
import { writeFamilyFolder } from '../testing/familyFolders';
import { type HubServer, startHubServer } from '../testing/hubServer';
import { UsageError } from './command';
import { hubCheckpointArg } from './hub-arg';
import { tmpDir } from './subprocess.testing';

const TMP = tmpDir('hub-arg');
const FOLDER = join(TMP, 'qwen3');
let hub: HubServer;
const saved = { ...process.env };
const tty = process.stderr.isTTY;

beforeAll(async () => {
  writeFamilyFolder(FOLDER, 'qwen3', 3);
  hub = await startHubServer({ 'tiny/qwen3': { dir: FOLDER } });
});
afterEach(() => {
  process.env = { ...saved };
  process.stderr.isTTY = tty;
});
afterAll(async () => {
  await hub.close();
  rmSync(TMP, { recursive: true, force: true });
});

function capture() {
  const lines: string[] = [];
  return { io: { out: () => {}, err: (t: string) => lines.push(t) }, lines };
}

describe('hubCheckpointArg', () => {
  it('on a terminal: progress in bytes of the total with an ETA, one line rewritten; from the cache: nothing', async () => {
    Object.assign(process.env, { HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: join(TMP, 'cache'), HF_TOKEN: '' });
    process.stderr.isTTY = true;
    const { io, lines } = capture();
    const dir = await hubCheckpointArg('hf:tiny/qwen3', io, 'drift');
    expect(dir).toBe(join(TMP, 'cache', 'models--tiny--qwen3', 'snapshots', hub.commit('tiny/qwen3')));
    const files = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'];
    const total = files.reduce((n, f) => n + statSync(join(FOLDER, f)).size, 0);
    const kib = `${(total / 1024).toFixed(1)} KiB`;
    expect(lines.every((l) => l.startsWith('\rmw drift: downloading hf:tiny/qwen3: '))).toBe(true);
    expect(lines.at(-1)).toMatch(new RegExp(`^\\rmw drift: downloading hf:tiny/qwen3: ${kib} of ${kib}, ETA \\d+s\\x1b\\[K\\n$`));
    expect(lines.slice(0, -1).every((l) => !l.endsWith('\n'))).toBe(true);

    const again = capture();
    expect(await hubCheckpointArg('hf:tiny/qwen3', again.io, 'drift')).toBe(dir);
    expect(again.lines).toEqual([]);
  });

  it('off a terminal a small download prints nothing; a bad id is a usage error; a refusal is one line naming the model', async () => {
    Object.assign(process.env, { HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: join(TMP, 'cache-quiet'), HF_TOKEN: '' });
    process.stderr.isTTY = false;
    const { io, lines } = capture();
    await hubCheckpointArg('hf:tiny/qwen3', io, 'score');
    expect(lines).toEqual([]);
    await expect(hubCheckpointArg('hf:a/b/c', io, 'import', { flag: 'tokenizer' })).rejects.toThrow(
      new UsageError('--tokenizer "hf:a/b/c" is not a Hub model id (hf:ORG/NAME or hf:ORG/NAME@REVISION)'),
    );
    const refused = hubCheckpointArg('hf:tiny/qwen3@v2', io, 'score');
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toThrow('hf:tiny/qwen3@v2: no revision "v2" (404)');
  });
});
