import { afterAll, beforeAll, describe, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import { createLogsoftmaxGather, createLogsoftmaxGatherBackward, createLogsoftmaxRows, uploadRequestIndex } from './logsoftmax';
import { releaseLaunches, submitValidated } from '../../runtime/kernel';
import { logsoftmaxGatherBackwardRef, logsoftmaxGatherRef } from './logsoftmax.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const rng = createRng(13);

interface Case {
  M: number;
  V: number;
  R: number;
  scale: number; // logits in [-scale, scale]
}

function inputs({ M, V, R, scale }: Case) {
  const logits = Float32Array.from({ length: M * V }, () => (rng.next() * 2 - 1) * scale); // (M, V)
  // Every fourth row has one logit of 90 or more: exp(90) overflows fp32, the max subtraction must hold.
  for (let r = 0; r < M; r += 4) logits[r * V + rng.int(V)] += 90;
  // Requests: every third row is never asked for, some rows are asked for twice.
  const rows = Uint32Array.from({ length: R }, (_, j) => [0, 1, 1, 3, 4, 6][j % 6] + 7 * Math.floor(j / 6)).map((r) => r % M);
  const tokens = Uint32Array.from({ length: R }, () => rng.int(V));
  return { logits, rows, tokens };
}

// fp32 log-sum-exp over V <= 272 terms of logits up to ~100.
const TOLERANCE = { abs: 3e-5, rel: 1e-5 };

const CASES: Case[] = [
  { M: 1, V: 1, R: 1, scale: 1 },
  { M: 37, V: 53, R: 40, scale: 3 },
  { M: 64, V: 272, R: 100, scale: 10 },
];

describe('logsoftmax.wgsl', () => {
  for (const c of CASES) {
    const { M, V, R } = c;
    it(`gather matches the reference for M=${M} V=${V} R=${R}`, async () => {
      const { device } = gpu;
      const { logits, rows, tokens } = inputs(c);
      const b = {
        logits: uploadStorage(device, 'test.logits', logits),
        rows: uploadStorage(device, 'test.rows', rows),
        tokens: uploadStorage(device, 'test.tokens', tokens),
        lse: createStorage(device, 'test.lse', R * 4),
        logprobs: createStorage(device, 'test.logprobs', R * 4),
      };
      const launches = await submitValidated(device, 'test.logsoftmaxGather', () => createLogsoftmaxGather(device, { R, V, M }, b));
      expectClose(await readFloat32(device, b.logprobs, R), logsoftmaxGatherRef(logits, V, rows, tokens), { ...TOLERANCE, label: 'logprobs' });
      releaseLaunches(launches);
      Object.values(b).forEach((buf) => buf.destroy());
    });

    it(`full rows match the reference for M=${M} V=${V} R=${R}`, async () => {
      const { device } = gpu;
      const { logits, rows } = inputs(c);
      const b = {
        logits: uploadStorage(device, 'test.logits', logits),
        rows: uploadStorage(device, 'test.rows', rows),
        lse: createStorage(device, 'test.lse', R * 4),
        out: createStorage(device, 'test.out', R * V * 4),
      };
      const launches = await submitValidated(device, 'test.logsoftmaxRows', () => createLogsoftmaxRows(device, { R, V, M }, b));
      // Row j of out is the gathered reference at every token of row rows[j].
      const everyRow = Uint32Array.from({ length: R * V }, (_, e) => rows[Math.floor(e / V)]);
      const everyToken = Uint32Array.from({ length: R * V }, (_, e) => e % V);
      expectClose(await readFloat32(device, b.out, R * V), logsoftmaxGatherRef(logits, V, everyRow, everyToken), { ...TOLERANCE, label: 'rows' });
      releaseLaunches(launches);
      Object.values(b).forEach((buf) => buf.destroy());
    });

    for (const accumulate of [false, true]) {
      it(`backward matches the reference for M=${M} V=${V} R=${R}${accumulate ? ', accumulating' : ''}`, async () => {
        const { device } = gpu;
        const { logits, rows, tokens } = inputs(c);
        const dLogprob = Float32Array.from({ length: R }, () => rng.next() * 2 - 1);
        const dLogits0 = Float32Array.from({ length: M * V }, () => rng.next() * 2 - 1);
        const index = uploadRequestIndex(device, rows, M);
        const b = {
          logits: uploadStorage(device, 'test.logits', logits),
          rows: uploadStorage(device, 'test.rows', rows),
          tokens: uploadStorage(device, 'test.tokens', tokens),
          lse: createStorage(device, 'test.lse', R * 4),
          logprobs: createStorage(device, 'test.logprobs', R * 4),
          dLogprob: uploadStorage(device, 'test.dLogprob', dLogprob),
          dLogits: uploadStorage(device, 'test.dLogits', dLogits0),
        };
        const launches = await submitValidated(device, 'test.logsoftmaxBackward', () => [
          ...createLogsoftmaxGather(device, { R, V, M }, b),
          createLogsoftmaxGatherBackward(device, { R, V, M }, index, b, { accumulate }),
        ]);
        const want = logsoftmaxGatherBackwardRef(logits, V, M, rows, tokens, dLogprob);
        if (accumulate) want.forEach((_, i) => (want[i] += dLogits0[i]));
        expectClose(await readFloat32(device, b.dLogits, M * V), want, { ...TOLERANCE, label: 'dLogits' });
        releaseLaunches(launches);
        index.destroy();
        Object.values(b).forEach((buf) => buf.destroy());
      });
    }
  }
});
