import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { presetModel, defaultRunConfig } from '../../run/config';
import type { LaneCheckpoint, MetricRecord } from '../../run/engine';
import { loadLastSet, saveLastSet } from './lastSet';
import { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun, type StoredRun } from './trainRun';

describe('the last opened set in IndexedDB', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
  });

  it('keeps the file itself with its name, the newest save replacing the last', async () => {
    expect(await loadLastSet()).toBeNull();
    await saveLastSet('example', 'worked-example', new Blob(['{"a":1}']));
    await saveLastSet('file', 'set.jsonl', new Blob(['{"id":"r1"}\n{"id":"r2"}\n'], { type: 'application/x-ndjson' }));
    const stored = (await loadLastSet())!;
    expect([stored.kind, stored.name]).toEqual(['file', 'set.jsonl']);
    expect(stored.blob).toBeInstanceOf(Blob);
    expect(await stored.blob.text()).toBe('{"id":"r1"}\n{"id":"r2"}\n');
  });

  it('reads a record that is not a set, or no IndexedDB at all, as nothing stored', async () => {
    const db = await openDB('memorywalker-workbench', 1);
    await db.put('sets', { kind: 'file', name: 'x.json', blob: 'not a blob' }, 'last');
    db.close();
    expect(await loadLastSet()).toBeNull();
    vi.stubGlobal('indexedDB', undefined);
    expect(await loadLastSet()).toBeNull();
    await expect(saveLastSet('file', 'x.json', new Blob(['{}']))).rejects.toThrow();
  });
});

describe('the training run in IndexedDB', () => {
  const config = { ...defaultRunConfig('tiny'), methods: ['naive-full', 'sdcc'] as LaneCheckpoint['method'][] };
  const run = (checkpointStep: number, playing = true): StoredRun => ({
    info: { id: 'run-1', config, model: presetModel(config), createdAt: 1_700_000_000_000, checkpointStep },
    playing,
  });
  const lane = (method: LaneCheckpoint['method'], step: number): LaneCheckpoint => ({
    method,
    step,
    weights: Uint8Array.from([step, 1, 2, 3]),
    optimizer: Uint8Array.from([step, 9]),
  });
  const history = [
    { method: 'sdcc', step: 1, loss: 5.5 },
    { method: 'naive-full', step: 1, loss: 5.25 },
  ] as unknown as MetricRecord[];

  it('restores a run before its first checkpoint without lanes or history', async () => {
    await saveRun(run(0, false));
    expect(await loadRun()).toEqual({ ...run(0, false), lanes: [], history: [] });
  });

  it("restores the last checkpoint: every lane's files in the run's method order and the history up to it", async () => {
    await saveCheckpoint(run(10), [lane('sdcc', 10), lane('naive-full', 10)], history);
    await saveCheckpoint(run(20), [lane('sdcc', 20), lane('naive-full', 20)], [...history, ...history]);
    const restored = (await loadRun())!;
    expect(restored.info.checkpointStep).toBe(20);
    expect(restored.playing).toBe(true);
    expect(restored.lanes.map((l) => [l.method, l.step, [...l.weights], [...l.optimizer]])).toEqual([
      ['naive-full', 20, [20, 1, 2, 3], [20, 9]],
      ['sdcc', 20, [20, 1, 2, 3], [20, 9]],
    ]);
    expect(restored.history).toEqual([...history, ...history]);
  });

  it('forgets the run with its checkpoints and history; kept checkpoint files stay', async () => {
    await saveCheckpoint(run(10), [lane('sdcc', 10), lane('naive-full', 10)], history);
    await saveFile({ name: 'warm.safetensors', bytes: Uint8Array.from([7, 7]), model: presetModel(config), savedAt: 1 });
    await clearRun();
    expect(await loadRun()).toBeNull();
    await saveRun(run(10)); // the same run id again: none of its old lanes or history come back
    expect(await loadRun()).toMatchObject({ lanes: [], history: [] });
    expect([...(await loadFile('warm.safetensors'))!.bytes]).toEqual([7, 7]);
    expect(await loadFile('other.safetensors')).toBeNull();
  });
});
