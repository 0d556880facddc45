// `mw score / drift --ckpt hf:ORG/NAME` as a user runs them, against a stand-in Hub on 127.0.0.1 (HF_ENDPOINT)
// serving a tiny Qwen3-family folder: the first run downloads into HF_HUB_CACHE and prints exactly what
// `--ckpt FOLDER` prints on the same files, the second makes no request, a run cut mid-download ends in one
// line and the next resumes it, and 404 / 401 are one line each (exit 2).

import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../rollout/importers/testing';
import { writeFamilyFolder } from '../testing/familyFolders';
import { type HubServer, startHubServer } from '../testing/hubServer';
import { mw, tmpDir, WORKED } from './subprocess.testing';

const TMP = tmpDir('score-hub');
const FOLDER = join(TMP, 'qwen3'); // named as the rollout's tokenizer, hf:qwen3
const ROLLOUT = join(TMP, 'qwen3-rollout.json');
let hub: HubServer;

beforeAll(async () => {
  writeFamilyFolder(FOLDER, 'qwen3', 3);
  // The worked example as recorded with the folder's tokenizer (its ids lie in the vocabulary of 320).
  const worked = JSON.parse(readFileSync(WORKED, 'utf8'));
  writeFileSync(ROLLOUT, JSON.stringify({ ...worked, id: 'qwen3-example', vocab: 320, tokenizer: 'hf:qwen3' }));
  hub = await startHubServer({ 'tiny/qwen3': { dir: FOLDER }, 'gated/qwen3': { dir: FOLDER, token: 'hf_secret' } });
});
afterAll(async () => {
  await hub.close();
  rmSync(TMP, { recursive: true, force: true });
});

const env = (cache: string, extra: Record<string, string> = {}) => ({ HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: join(TMP, cache), HF_TOKEN: '', ...extra });

describe('mw score / drift --ckpt hf:ORG/NAME', () => {
  it('downloads once, then loads from the cache with no request; scores and drift equal --ckpt FOLDER', async () => {
    const before = hub.log.length;
    const score = await mw(['score', '--ckpt', 'hf:tiny/qwen3', ROLLOUT, '--method', 'naive-compressed', '--json'], env('cache'));
    expect(score.stderr).toBe('');
    expect(score.code).toBe(0);
    const downloaded = hub.log
      .slice(before)
      .filter((r) => r.method === 'GET')
      .reduce((n, r) => n + r.bytes, 0);
    const files = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'model.safetensors'];
    expect(downloaded).toBe(files.reduce((n, f) => n + statSync(join(FOLDER, f)).size, 0));
    const local = await mw(['score', '--ckpt', FOLDER, ROLLOUT, '--method', 'naive-compressed', '--json']);
    expect(local.code).toBe(0);
    expect(score.stdout).toBe(local.stdout);
    expect(JSON.parse(score.stdout).targets.length).toBe(4); // naive-compressed scores the worked example's 4 targets on its final walk

    const cached = hub.log.length;
    const drift = await mw(['drift', '--ckpt', 'hf:tiny/qwen3', '--rollouts', ROLLOUT, '--json'], env('cache'));
    expect(drift.stderr).toBe('');
    expect(drift.code).toBe(0);
    expect(hub.log.length).toBe(cached); // from the cache: not one request
    const localDrift = await mw(['drift', '--ckpt', FOLDER, '--rollouts', ROLLOUT, '--json']);
    expect(drift.stdout).toBe(localDrift.stdout);
    expect(JSON.parse(drift.stdout).methods['logit-tree'].conditioningDrift).toBeLessThan(1e-5);
  });

  it('a download cut mid-file ends in one line (exit 2); the next run fetches only the rest', async () => {
    const whole = statSync(join(FOLDER, 'model.safetensors')).size;
    hub.cutNext('model.safetensors', 1000);
    const args = ['score', '--ckpt', 'hf:tiny/qwen3', ROLLOUT, '--method', 'logit-tree', '--json'];
    const cut = await mw(args, env('cache-resume'));
    expect(cut).toEqual({
      code: 2,
      stdout: '',
      stderr: `hf:tiny/qwen3: connection lost after 1000 of ${whole} bytes of model.safetensors; the part that arrived is kept: load again to resume\n`,
    });
    const before = hub.log.length;
    const resumed = await mw(args, env('cache-resume'));
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    const weights = hub.log.slice(before).filter((r) => r.method === 'GET' && r.path.endsWith('/model.safetensors'));
    expect(weights.map((r) => [r.range, r.bytes])).toEqual([['bytes=1000-', whole - 1000]]);
    // The resumed file is the Hub's, byte for byte (the scores then are the folder's, as the first test shows).
    const snapshot = join(TMP, 'cache-resume', 'models--tiny--qwen3', 'snapshots', hub.commit('tiny/qwen3'));
    expect(readFileSync(join(snapshot, 'model.safetensors')).equals(readFileSync(join(FOLDER, 'model.safetensors')))).toBe(true);
    expect(JSON.parse(resumed.stdout).targets.length).toBe(8); // logit-tree scores all 8 targets of the worked example
  });

  it('404 and 401 are one line each (exit 2); HF_TOKEN opens a gated model', async () => {
    const run = (id: string, extra: Record<string, string> = {}) => mw(['drift', '--ckpt', id, '--rollouts', ROLLOUT, '--json'], env('cache-errors', extra));
    expect(await run('hf:tiny/nothing', { HF_TOKEN: 'hf_secret' })).toEqual({
      code: 2,
      stdout: '',
      stderr: `hf:tiny/nothing: no such model on ${hub.endpoint} (404)\n`,
    });
    expect(await run('hf:tiny/nothing')).toEqual({
      code: 2,
      stdout: '',
      stderr: `hf:tiny/nothing: no such model on ${hub.endpoint}, or it is private (401): check the id, or set HF_TOKEN to a token that can read it\n`,
    });
    expect(await run('hf:tiny/qwen3@v2')).toEqual({ code: 2, stdout: '', stderr: 'hf:tiny/qwen3@v2: no revision "v2" (404)\n' });
    expect(await run('hf:gated/qwen3')).toEqual({
      code: 2,
      stdout: '',
      stderr: 'hf:gated/qwen3: the model is gated or private (401): set HF_TOKEN to a token that can read it\n',
    });
    const before = hub.log.length;
    // (Its tokenizer alone, for mw import: no GPU needed to show the token opens it.)
    const opened = await mw(
      ['import', fixturePath('agent-session-two-compactions.jsonl'), '--tokenizer', 'hf:gated/qwen3', '--out', join(TMP, 'gated.jsonl')],
      env('cache-errors', { HF_TOKEN: 'hf_secret' }),
    );
    expect(opened.code).toBe(0);
    expect(hub.log.slice(before).every((r) => r.authorization === 'Bearer hf_secret')).toBe(true);
  });

  it('mw import --tokenizer hf:ORG/NAME fetches the tokenizer files only and writes what --tokenizer FOLDER writes', async () => {
    const session = fixturePath('agent-session-two-compactions.jsonl');
    const before = hub.log.length;
    const out = join(TMP, 'session.hub.jsonl');
    const run = await mw(['import', session, '--tokenizer', 'hf:tiny/qwen3', '--out', out], env('cache-import'));
    expect(run.code).toBe(0);
    const asked = hub.log.slice(before).map((r) => r.path.split('/').pop());
    expect(asked).toContain('tokenizer.json');
    expect(asked.some((f) => f?.endsWith('.safetensors'))).toBe(false);
    const local = join(TMP, 'session.folder.jsonl');
    expect((await mw(['import', session, '--tokenizer', FOLDER, '--out', local])).code).toBe(0);
    const imported = readFileSync(out, 'utf8');
    expect(imported).toBe(readFileSync(local, 'utf8'));
    expect(imported).toContain('"tokenizer":"hf:qwen3"');
    // Again: from the cache, not one request.
    const cached = hub.log.length;
    expect((await mw(['import', session, '--tokenizer', 'hf:tiny/qwen3', '--out', join(TMP, 'again.jsonl')], env('cache-import'))).code).toBe(0);
    expect(hub.log.length).toBe(cached);
  });
});
