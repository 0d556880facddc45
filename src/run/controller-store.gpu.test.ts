// The browser's checkpoints are one unit (docs/reliability.md), shown with the page's own store
// (src/app/persist/trainRun.ts on fake-indexeddb) under the run controller: each lane's weights and
// optimizer state are bound by digest and stored in one transaction, a reload resumes from them bit
// for bit, the page's exports are the bound bytes, and a mixed pair in the store is refused with
// the reason instead of resumed.

import 'fake-indexeddb/auto';
import { openDB } from 'idb';
import { describe, expect, it } from 'vitest';
import { createGpu } from '../gpu/runtime/device';
import { checkPair, WEIGHTS_DIGEST_KEY } from '../model/checkpoint';
import { readSafetensorsHeader } from '../util/safetensors';
import { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun } from '../app/persist/trainRun';
import { defaultRunConfig, type RunConfig } from './config';
import { createRunController, type RunEvent, type RunStore } from './controller';
import type { LaneCheckpoint, MetricRecord } from './engine';

const config: RunConfig = { ...defaultRunConfig('tiny'), methods: ['packed-4d'], batch: 2, steps: 4, checkpointEvery: 2, evalEvery: 0, seed: 5 };
const store: RunStore = { clearRun, loadFile, loadRun, saveCheckpoint, saveFile, saveRun };

function controllerOn() {
  const events: RunEvent[] = [];
  const controller = createRunController({ createGpu: () => createGpu(), store, emit: (e) => void events.push(e), liveIntervalMs: 0 });
  const of = <T extends RunEvent['type']>(type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
  const losses = () => (of('metrics').flatMap((e) => e.records) as MetricRecord[]).map((r) => r.loss);
  return { controller, of, losses, status: () => of('status').at(-1)!.status };
}

/** The stored lane, as IndexedDB holds it (the page's database, read and written directly). */
async function storedLane(): Promise<{ key: string; lane: LaneCheckpoint }> {
  const db = await openDB('memorywalker-train', 1);
  const key = (await db.getAllKeys('lanes')).map(String).find((k) => k.endsWith('/packed-4d'))!;
  const lane = (await db.get('lanes', key)) as LaneCheckpoint;
  db.close();
  return { key, lane };
}

async function putLane(key: string, lane: LaneCheckpoint): Promise<void> {
  const db = await openDB('memorywalker-train', 1);
  await db.put('lanes', lane, key);
  db.close();
}

describe('the browser run checkpoint as one unit (IndexedDB)', () => {
  it('stores bound pairs, resumes them bit for bit after a reload, exports the bound bytes, and refuses a mixed pair in the page', async () => {
    // The uninterrupted run: the oracle.
    const straight = controllerOn();
    straight.controller.start(config);
    await straight.controller.settled();
    expect(straight.status().phase).toBe('done');
    const oracle = straight.losses();
    expect(oracle).toHaveLength(4);

    // A second run stops after step 3 (a closed tab): its checkpoint of step 2 is in IndexedDB.
    const cut = controllerOn();
    cut.controller.start(config, true);
    for (let i = 0; i < 3; i++) cut.controller.step();
    await cut.controller.settled();
    const exported = await cut.controller.exportCheckpoint('packed-4d');
    const { key, lane } = await storedLane();
    expect(lane.step).toBe(2);
    expect(checkPair(lane.weights, lane.optimizer)).toEqual({ ok: true, bound: true });
    // The page's downloads (src/app/train/Lanes.tsx) are the trainer's bound pair at the current step.
    expect(checkPair(exported.weights, exported.optimizer)).toEqual({ ok: true, bound: true });
    expect(readSafetensorsHeader(exported.optimizer).metadata).toMatchObject({ step: '3', [WEIGHTS_DIGEST_KEY]: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(readSafetensorsHeader(exported.weights).metadata).toMatchObject({ step: '3', method: 'packed-4d' });

    // A reload: the stored pair is checked and resumed; steps 3 and 4 repeat the oracle's losses exactly.
    const reloaded = controllerOn();
    reloaded.controller.hello();
    await reloaded.controller.settled();
    expect(reloaded.of('run').at(-1)!.run!.checkpointStep).toBe(2);
    reloaded.controller.play();
    await reloaded.controller.settled();
    expect(reloaded.status().phase).toBe('done');
    expect(reloaded.losses()).toEqual(oracle.slice(2));

    // A mixed pair in the store: the weights of another save (one low mantissa bit differs, so they
    // load as weights) beside this save's optimizer state. The page says why and resumes nothing.
    const { lane: last } = await storedLane();
    const otherWeights = last.weights.slice();
    otherWeights[otherWeights.length - 4] ^= 1;
    await putLane(key, { ...last, weights: otherWeights });
    const mixed = controllerOn();
    mixed.controller.hello();
    await mixed.controller.settled();
    expect(mixed.status()).toEqual({
      phase: 'refused',
      cause: 'not-restored',
      reason:
        "the packed-4d lane's checkpoint of step 4: checkpoint: the optimizer state (step 4) was saved with other weights (weights_sha256 differs): a mixed pair, e.g. from an interrupted save",
    });
    expect(mixed.of('run').filter((e) => e.run)).toEqual([]);
    expect(mixed.of('metrics')).toEqual([]);

    // A lane record whose step is not its pair's (a record of another save around a matching pair).
    await putLane(key, { ...last, step: 3 });
    const stepped = controllerOn();
    stepped.controller.hello();
    await stepped.controller.settled();
    expect(stepped.status()).toMatchObject({
      phase: 'refused',
      cause: 'not-restored',
      reason: "the packed-4d lane's checkpoint of step 3: checkpoint: the optimizer state is at step 4, the lane at step 3",
    });

    // Starting a new run replaces the refused one.
    stepped.controller.start({ ...config, steps: 1 });
    await stepped.controller.settled();
    expect(stepped.status().phase).toBe('done');
    expect(checkPair((await storedLane()).lane.weights, (await storedLane()).lane.optimizer)).toEqual({ ok: true, bound: true });
  });
});
