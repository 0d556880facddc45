import 'fake-indexeddb/auto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { forgetScoringCheckpoint, loadScoringCheckpoint, saveScoringCheckpoint } from './checkpoint';

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

  it('reads no IndexedDB at all as nothing stored', async () => {
    vi.stubGlobal('indexedDB', undefined);
    expect(await loadScoringCheckpoint()).toBeNull();
  });
});
