// The browser's run controller in Node, as the train worker drives it: a run plays to its end with
// checkpoints on cadence; a reload (a new controller on the same store) resumes from the last
// checkpoint with bit-identical losses; a lost device is replaced and the run restored; a refused
// config names the limit; exports load as checkpoints.

import { describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../gpu/runtime/device';
import { loadCheckpoint, loadOptimizerState } from '../model/checkpoint';
import { defaultRunConfig, type RunConfig } from './config';
import { createRunController, type RunEvent, type RunStore } from './controller';
import { memoryStore } from './store.testing';
import type { MetricRecord } from './engine';

const config: RunConfig = { ...defaultRunConfig('tiny'), methods: ['naive-compressed', 'packed-4d'], batch: 2, steps: 5, checkpointEvery: 2, evalEvery: 0 };

function controllerOn(store: RunStore) {
  const events: RunEvent[] = [];
  // The devices the controller made: a test destroys the newest as a driver reset would (under the run, not through reset).
  const devices: Gpu[] = [];
  const made = async () => {
    const gpu = await createGpu();
    devices.push(gpu);
    return gpu;
  };
  const controller = createRunController({ createGpu: made, store, emit: (e) => void events.push(e), liveIntervalMs: 0 });
  const loseDevice = () => devices.at(-1)!.device.destroy();
  const of = <T extends RunEvent['type']>(type: T) => events.filter((e): e is Extract<RunEvent, { type: T }> => e.type === type);
  const records = () => of('metrics').flatMap((e) => e.records) as MetricRecord[];
  const phases = () => of('status').map((e) => e.status.phase);
  return { controller, events, of, records, phases, loseDevice };
}

const losses = (records: readonly MetricRecord[], method: string) => records.filter((r) => r.method === method).map((r) => r.loss);

describe('run controller', () => {
  it('plays a run to its end with checkpoints on cadence; a reload resumes from the last one, bit for bit', async () => {
    const store = memoryStore();
    const first = controllerOn(store);
    first.controller.hello();
    first.controller.start(config);
    await first.controller.settled();
    expect(first.phases()).toEqual(['idle', 'preparing', 'running', 'done']);
    expect(first.records().map((r) => `${r.method}@${r.step}`)).toEqual([1, 2, 3, 4, 5].flatMap((s) => [`naive-compressed@${s}`, `packed-4d@${s}`]));
    // Every checkpointEvery steps and at the end, with the history up to it.
    expect(store.writes.filter((w) => w.startsWith('checkpoint'))).toEqual([
      'checkpoint naive-compressed@2 packed-4d@2 history 4',
      'checkpoint naive-compressed@4 packed-4d@4 history 8',
      'checkpoint naive-compressed@5 packed-4d@5 history 10',
    ]);
    expect(first.of('checkpointed').map((e) => e.step)).toEqual([2, 4, 5]);
    // Every episode was shown live as it was played (step 1's by the preflight, which checks them against the model, unseen).
    const live = first.of('live');
    expect(live.filter((e) => e.done).map((e) => e.step)).toEqual([1, 1, 2, 2, 3, 3, 4, 4]);
    expect(live.every((e) => e.player === 'expert' && e.purpose === 'train')).toBe(true);

    // The page reloads after step 3 of a second run: a new controller restores its step-2 checkpoint and continues.
    const second = controllerOn(store);
    second.controller.start(config, true);
    for (let i = 0; i < 3; i++) second.controller.step();
    await second.controller.settled();
    expect(second.records().map((r) => r.step)).toEqual([1, 1, 2, 2, 3, 3]);
    const reloaded = controllerOn(store);
    reloaded.controller.hello();
    await reloaded.controller.settled();
    const restored = reloaded.of('run').at(-1)!;
    expect(restored.run!.checkpointStep).toBe(2);
    expect(restored.history.map((r) => r.step)).toEqual([1, 1, 2, 2]);
    expect(reloaded.phases().at(-1)).toBe('paused');
    reloaded.controller.play();
    await reloaded.controller.settled();
    expect(reloaded.phases().at(-1)).toBe('done');
    const resumed = reloaded.records();
    expect(resumed.map((r) => r.step)).toEqual([3, 3, 4, 4, 5, 5]);
    for (const method of config.methods) expect(losses(resumed, method)).toEqual(losses(first.records(), method).slice(2));
  });

  it('a lost device is replaced and the run restored from its last checkpoint; exports load back', async () => {
    const run = controllerOn(memoryStore());
    run.controller.start({ ...config, steps: 0 }, true);
    for (let i = 0; i < 3; i++) run.controller.step();
    await run.controller.settled();
    run.loseDevice();
    await new Promise((r) => setTimeout(r, 50));
    await run.controller.settled();
    expect(run.of('device-lost')).toHaveLength(1);
    expect(run.of('recovered').map((e) => e.step)).toEqual([2]);
    expect(run.phases().at(-1)).toBe('paused');
    run.controller.step();
    await run.controller.settled();
    expect(
      run
        .records()
        .slice(-2)
        .map((r) => r.step),
    ).toEqual([3, 3]);
    expect(losses(run.records().slice(-2), 'packed-4d')).toEqual(losses(run.records(), 'packed-4d').slice(2, 3));

    const file = await run.controller.exportCheckpoint('packed-4d');
    expect(file.name).toMatch(/^run-\w+-packed-4d-step3$/);
    const weights = loadCheckpoint(file.weights);
    expect(loadOptimizerState(file.optimizer, weights.config).step).toBe(3);
    const batch = run.of('batch').at(-1)!;
    const rollout = await run.controller.rollout(batch.method, batch.rollouts[0].id);
    expect(rollout.id).toBe(batch.rollouts[0].id);
    const scores = await run.controller.score(batch.method, rollout.id);
    // naive-full scores on the whole tape: only when it fits the model's positions.
    const expected = ['naive-compressed', ...(batch.rollouts[0].length <= 128 ? ['naive-full'] : []), 'logit-tree', 'packed-4d'];
    expect(Object.keys(scores.methods)).toEqual(expected);
    expect(scores.methods['logit-tree']!.every((lp) => lp !== null && lp < 0)).toBe(true);
    run.controller.reset();
    await run.controller.settled();
    expect(run.of('run').at(-1)!.run).toBeNull();
  });

  it('refuses a config a tiny model cannot take, naming the limit', async () => {
    const run = controllerOn(memoryStore());
    run.controller.start({ ...config, methods: ['naive-full'] });
    await run.controller.settled();
    const refused = run.of('status').at(-1)!.status;
    expect(refused).toMatchObject({ phase: 'refused', cause: 'refused' });
    expect(refused.reason).toMatch(/n_positions 128/);
  });
});
