import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openDB } from 'idb';
import { forgetScoringCheckpoint, loadScoringCheckpoint, saveScoringCheckpoint, saveScoringFolder, saveScoringHubModel } from './checkpoint';

describe('the scoring checkpoint in IndexedDB', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('keeps the bytes under their name, the newest replacing the last, until forgotten', async () => {
    expect(await loadScoringCheckpoint()).toBeNull();
    await saveScoringCheckpoint('a.safetensors', new Blob([new Uint8Array([1, 2, 3])]));
    await saveScoringCheckpoint('demo.safetensors', new Blob([new Uint8Array([4, 5])]));
    const stored = (await loadScoringCheckpoint())!;
    expect(stored.name).toBe('demo.safetensors');
    if (stored.kind !== 'checkpoint') throw new Error(`kept as ${stored.kind}`);
    expect(Array.from(new Uint8Array(await stored.blob.arrayBuffer()))).toEqual([4, 5]);
    await forgetScoringCheckpoint();
    expect(await loadScoringCheckpoint()).toBeNull();
  });

  it('keeps a model folder file by file under its name; above the limit only its name and size', async () => {
    const files = new Map([
      ['config.json', new Blob(['{"architectures":["Qwen3ForCausalLM"]}'])],
      ['model.safetensors', new Blob([new Uint8Array([7, 8, 9])])],
    ]);
    await saveScoringFolder('qwen3', files);
    const kept = (await loadScoringCheckpoint())!;
    if (kept.kind !== 'folder') throw new Error(`kept as ${kept.kind}`);
    expect(kept.name).toBe('qwen3');
    expect([...kept.files.keys()]).toEqual(['config.json', 'model.safetensors']);
    expect(await kept.files.get('config.json')!.text()).toBe('{"architectures":["Qwen3ForCausalLM"]}');
    expect(Array.from(new Uint8Array(await kept.files.get('model.safetensors')!.arrayBuffer()))).toEqual([7, 8, 9]);

    // 41 bytes in all: kept under a limit of 41, only named above it.
    await saveScoringFolder('qwen3', files, 40);
    expect(await loadScoringCheckpoint()).toMatchObject({ kind: 'folder-not-kept', name: 'qwen3', bytes: 41 });
    await forgetScoringCheckpoint();
  });

  it('keeps a Hub model as its id only (its files are in the Hub cache)', async () => {
    await saveScoringHubModel('Qwen3-0.6B', 'Qwen/Qwen3-0.6B@main');
    expect(await loadScoringCheckpoint()).toMatchObject({ kind: 'hub', name: 'Qwen3-0.6B', id: 'Qwen/Qwen3-0.6B@main' });
    await forgetScoringCheckpoint();
  });

  it('reads a record kept before folders were (no kind) as a checkpoint, and a broken folder record as nothing', async () => {
    const db = await openDB('memorywalker-scoring', 1);
    await db.put('checkpoints', { name: 'old.safetensors', blob: new Blob([new Uint8Array([1])]), savedAt: 5 }, 'scoring');
    db.close();
    expect(await loadScoringCheckpoint()).toMatchObject({ kind: 'checkpoint', name: 'old.safetensors', savedAt: 5 });
    const again = await openDB('memorywalker-scoring', 1);
    await again.put('checkpoints', { kind: 'folder', name: 'x', files: new Map([['config.json', 'not a blob']]), savedAt: 1 }, 'scoring');
    again.close();
    expect(await loadScoringCheckpoint()).toBeNull();
    await forgetScoringCheckpoint();
  });

  it('reads no IndexedDB at all as nothing stored', async () => {
    vi.stubGlobal('indexedDB', undefined);
    expect(await loadScoringCheckpoint()).toBeNull();
  });
});
