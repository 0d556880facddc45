// The training run's checkpoint in IndexedDB is one unit: every lane's pair, the history and the run
// record are written in one transaction, so a save that fails part-way leaves the last checkpoint
// whole (fake-indexeddb, which clones and aborts as browsers do).
import 'fake-indexeddb/auto';
import { describe, expect, it } from 'vitest';
import { checkPair, saveCheckpointPair, type OptimizerState } from '../../model/checkpoint';
import { initWeights, parameterShapes } from '../../model/params';
import { defaultRunConfig, presetModel } from '../../run/config';
import type { LaneCheckpoint, MetricRecord } from '../../run/engine';
import { loadRun, saveCheckpoint, type StoredRun } from './trainRun';

const config = { ...defaultRunConfig('tiny'), methods: ['naive-compressed', 'packed-4d'] as LaneCheckpoint['method'][] };
const model = presetModel(config);

const run = (checkpointStep: number): StoredRun => ({ info: { id: 'run-pair', config, model, createdAt: 1, checkpointStep }, playing: false });

/** A lane's pair as the trainer makes it (bound by digest), at `step`. */
function lane(method: LaneCheckpoint['method'], step: number): LaneCheckpoint {
  const state: OptimizerState = { step, m: new Map(), v: new Map() };
  for (const { name, shape } of parameterShapes(model)) {
    const n = shape.reduce((a, b) => a * b, 1);
    state.m.set(name, new Float32Array(n).fill(step / 100));
    state.v.set(name, new Float32Array(n).fill(step / 1000));
  }
  return { method, step, ...saveCheckpointPair(initWeights(model, step), state) };
}

const history = (steps: number) =>
  Array.from({ length: steps }, (_, i) => ({ method: 'packed-4d', step: i + 1, loss: 5 - i / 10 })) as unknown as MetricRecord[];

describe('the run checkpoint in IndexedDB', () => {
  it('keeps the last checkpoint whole when a save fails part-way: every lane, the history and the run record', async () => {
    await saveCheckpoint(run(2), [lane('naive-compressed', 2), lane('packed-4d', 2)], history(2));
    // The second lane cannot be stored (a value IndexedDB cannot clone): the save fails after the first lane's put.
    const unstorable = { ...lane('packed-4d', 4), weights: (() => 0) as unknown as Uint8Array };
    await expect(saveCheckpoint(run(4), [lane('naive-compressed', 4), unstorable], history(4))).rejects.toThrow();
    const restored = (await loadRun())!;
    expect(restored.info.checkpointStep).toBe(2);
    expect(restored.lanes.map((l) => [l.method, l.step])).toEqual([
      ['naive-compressed', 2],
      ['packed-4d', 2],
    ]);
    expect(restored.history.map((r) => r.step)).toEqual([1, 2]);
    // What comes back is each lane's own pair, bound by digest.
    for (const l of restored.lanes) expect(checkPair(l.weights, l.optimizer)).toEqual({ ok: true, bound: true });
  });
});
