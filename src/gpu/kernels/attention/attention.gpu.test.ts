// attention.wgsl against the float64 reference (attention.reference.ts): forward out and
// lse, backward dqkv, for causal, tree, block-diagonal and empty-row masks, both kernel variants,
// odd N and odd tile remainders; and the tile pairs the kernels visit are exactly the visible ones.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGpu, type Gpu } from '../../runtime/device';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import {
  ATTENTION_LONG_MAX_HS,
  ATTENTION_MAX_HS,
  attentionConfig,
  createAttentionBackward,
  createAttentionForward,
  createAttentionMask,
  readAttentionVisits,
  type AttentionConfig,
  type AttentionVisits,
} from './attention';
import { causalEnd, packEnds, randomTreeEnd } from './attention-test-masks';
import { submitValidated } from '../../runtime/kernel';
import { attentionBackwardRef, attentionRef, visible } from './attention.reference';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';

let gpu: Gpu;
beforeAll(async () => {
  gpu = await createGpu();
});
afterAll(() => gpu?.destroy());

const FORWARD_ABS = 1e-5;
const BACKWARD_ABS = 1e-5;
const BACKWARD_REL = 1e-4;

interface Run {
  out: Float32Array; // (N, C)
  lse: Float32Array; // (NH, N)
  dqkv: Float32Array; // (N, 3C)
  visits: AttentionVisits;
  qkv: Float32Array;
  dOut: Float32Array;
}

async function runAttention(end: Uint32Array, NH: number, HS: number, config: AttentionConfig, seed: number): Promise<Run> {
  const { device } = gpu;
  const N = end.length;
  const C = NH * HS;
  const rng = createRng(seed);
  const qkv = Float32Array.from({ length: N * 3 * C }, () => rng.normal()); // (N, 3C)
  const dOut = Float32Array.from({ length: N * C }, () => rng.normal()); // (N, C)
  const mask = createAttentionMask(device, end, { ...config, countVisits: true });
  const buffers = {
    qkv: uploadStorage(device, 'test.qkv', qkv),
    dOut: uploadStorage(device, 'test.dOut', dOut),
    out: createStorage(device, 'test.out', N * C * 4),
    lse: createStorage(device, 'test.lse', NH * N * 4),
    delta: createStorage(device, 'test.delta', NH * N * 4),
    dqkv: createStorage(device, 'test.dqkv', N * 3 * C * 4),
  };
  // Forward and backward in one pass, as the engine encodes them.
  await submitValidated(device, 'test.attention', () => [
    createAttentionForward(device, mask, { NH, HS }, buffers),
    ...createAttentionBackward(device, mask, { NH, HS }, buffers),
  ]);
  const run = {
    out: await readFloat32(device, buffers.out, N * C),
    lse: await readFloat32(device, buffers.lse, NH * N),
    dqkv: await readFloat32(device, buffers.dqkv, N * 3 * C),
    visits: await readAttentionVisits(device, mask),
    qkv,
    dOut,
  };
  for (const buffer of Object.values(buffers)) buffer.destroy();
  mask.destroy();
  return run;
}

/** Tile pairs holding at least one visible (query, key) pair, by brute force over all pairs. */
function visibleTilePairs(end: Uint32Array, BQ: number, BK: number): number {
  const N = end.length;
  const seen = new Set<number>();
  for (let i = 0; i < N; i++) {
    for (let k = 0; k <= i; k++) if (visible(end, i, k)) seen.add(Math.floor(i / BQ) * N + Math.floor(k / BK));
  }
  return seen.size;
}

async function checkAgainstReference(name: string, end: Uint32Array, NH: number, HS: number, config: AttentionConfig, seed = 1) {
  const N = end.length;
  const C = NH * HS;
  const run = await runAttention(end, NH, HS, config, seed);
  const want = attentionRef(run.qkv, end, N, C, NH);
  expectClose(run.out, want.out, { abs: FORWARD_ABS, label: `${name}: out` });
  // lse: -inf exactly where the reference has it (rows that see nothing), close elsewhere.
  for (let r = 0; r < NH * N; r++) {
    if (want.lse[r] === -Infinity) expect(run.lse[r], `${name}: lse[${r}]`).toBe(-Infinity);
    else expect(Math.abs(run.lse[r] - want.lse[r]), `${name}: lse[${r}] = ${run.lse[r]}, want ${want.lse[r]}`).toBeLessThanOrEqual(FORWARD_ABS);
  }
  const dqkv = attentionBackwardRef(run.qkv, end, run.dOut, N, C, NH);
  expectClose(run.dqkv, dqkv, { abs: BACKWARD_ABS, rel: BACKWARD_REL, label: `${name}: dqkv` });
  const pairs = visibleTilePairs(end, config.BQ, config.BK);
  expect(run.visits).toEqual({ forward: NH * pairs, backwardQuery: NH * pairs, backwardKey: NH * pairs });
  return { run, want, pairs };
}

const ROWS: AttentionConfig = { BQ: 16, BK: 16, shared: false };
const SHARED: AttentionConfig = { BQ: 16, BK: 8, shared: true };
const ODD_TILES: AttentionConfig = { BQ: 5, BK: 3, shared: true };

describe('attention.wgsl', () => {
  it('picks the register variant on SwiftShader', () => {
    expect(attentionConfig(gpu.info).shared).toBe(!gpu.info.isSoftware);
  });

  for (const [variant, config] of [
    ['rows', ROWS],
    ['shared', SHARED],
  ] as const) {
    describe(`${variant} variant (BQ ${config.BQ}, BK ${config.BK})`, () => {
      it('causal, N=1 and N=37', async () => {
        await checkAgainstReference('causal N=1', causalEnd(1), 1, 8, config, 11);
        await checkAgainstReference('causal N=37', causalEnd(37), 2, 8, config, 12);
      });

      it('packed tree, N=100, NH=3, HS=16', async () => {
        const end = randomTreeEnd(createRng(3), 100, 0.1);
        const { pairs } = await checkAgainstReference('tree N=100', end, 3, 16, config, 13);
        const causalPairs = visibleTilePairs(causalEnd(100), config.BQ, config.BK);
        expect(pairs).toBeLessThan(causalPairs);
      });

      it('block-diagonal batch of trees and causal sequences, N=257, NH=4, HS=8', async () => {
        const rng = createRng(4);
        const end = packEnds([randomTreeEnd(rng, 90, 0.05), causalEnd(7), randomTreeEnd(rng, 120, 0.2), causalEnd(40)]);
        expect(end.length).toBe(257);
        await checkAgainstReference('block-diagonal N=257', end, 4, 8, config, 14);
      });

      it('HS=32 with a sparse tree that skips most tiles, N=300', async () => {
        const end = randomTreeEnd(createRng(5), 300, 0.3);
        await checkAgainstReference('tree N=300 HS=32', end, 1, 32, config, 15);
      });

      it('keys seen by nobody and query rows that see nothing: zeros, lse = -inf, no NaN', async () => {
        // Block 0 = 0..7 with key 3 seen by nobody; block 1 = 7..19 starts with a key nobody sees, so
        // row 7 sees nothing; row 0 of block 0 also sees nothing (end[0] = 0).
        const block0 = causalEnd(7);
        block0[0] = 0;
        block0[3] = 3;
        const block1 = causalEnd(12);
        block1[0] = 0;
        const end = packEnds([block0, block1]);
        const { run, want } = await checkAgainstReference('masked rows', end, 2, 8, config, 16);
        const N = end.length;
        const C = 16;
        for (const row of [0, 7]) {
          for (let h = 0; h < 2; h++) expect(want.lse[h * N + row]).toBe(-Infinity);
          expect(Array.from(run.out.subarray(row * C, (row + 1) * C))).toEqual(new Array(C).fill(0));
          expect(Array.from(run.dqkv.subarray(row * 3 * C, row * 3 * C + C))).toEqual(new Array(C).fill(0)); // dQ
        }
        for (const key of [0, 3, 7]) {
          expect(Array.from(run.dqkv.subarray(key * 3 * C + C, (key + 1) * 3 * C))).toEqual(new Array(2 * C).fill(0)); // dK, dV
        }
        expect(run.dqkv.every(Number.isFinite) && run.out.every(Number.isFinite)).toBe(true);
      });
    });
  }

  it('odd tile sizes (BQ 5, BK 3) with odd N=7 and N=101', async () => {
    await checkAgainstReference('causal N=7 odd tiles', causalEnd(7), 2, 12, ODD_TILES, 21);
    const end = packEnds([randomTreeEnd(createRng(6), 60, 0.15), causalEnd(41)]);
    await checkAgainstReference('tree+causal N=101 odd tiles', end, 3, 8, ODD_TILES, 22);
  });

  it('the largest head, HS = MAX_HS, in both variants (every unrolled row line)', async () => {
    const end = packEnds([randomTreeEnd(createRng(9), 40, 0.2), causalEnd(9)]);
    await checkAgainstReference('HS=MAX_HS rows', end, 2, ATTENTION_MAX_HS, ROWS, 31);
    await checkAgainstReference('HS=MAX_HS shared', end, 2, ATTENTION_MAX_HS, SHARED, 32);
  });

  it("grouped rows (SDCC): each group sees only its own tree; a backward over the first rows reads lse at the forward's stride", async () => {
    // Group g is a random tree of U_g rows in preorder, split at L_g: rows [0, L_g) go to the front
    // region, the rest after every group's front rows (the layout of packSdccBatch).
    const { device } = gpu;
    const rng = createRng(41);
    const NH = 2;
    const HS = 8;
    const C = NH * HS;
    const groups = [
      { end: randomTreeEnd(rng, 45, 0.15), L: 30 },
      { end: randomTreeEnd(rng, 20, 0.3), L: 20 },
      { end: randomTreeEnd(rng, 38, 0.1), L: 9 },
    ];
    const S = groups.reduce((n, g) => n + g.L, 0);
    const U = groups.reduce((n, g) => n + g.end.length, 0);
    const end = new Uint32Array(U);
    const group = new Uint32Array(U);
    const front = new Uint32Array(S); // the front rows' own visibility (ends clipped to their region)
    const rowsOf: number[][] = [];
    let sOff = 0;
    let tOff = S;
    groups.forEach((g, gi) => {
      const at = (r: number) => (r < g.L ? sOff + r : tOff + r - g.L);
      const endAt = (e: number) => (e <= g.L ? sOff + e : tOff + e - g.L);
      rowsOf.push(Array.from(g.end, (_, r) => at(r)));
      g.end.forEach((e, r) => {
        end[at(r)] = endAt(e);
        group[at(r)] = gi;
        if (r < g.L) front[at(r)] = sOff + Math.min(e, g.L);
      });
      sOff += g.L;
      tOff += g.end.length - g.L;
    });
    const qkv = Float32Array.from({ length: U * 3 * C }, () => rng.normal());
    const dOut = Float32Array.from({ length: S * C }, () => rng.normal());
    for (const config of [ROWS, SHARED]) {
      const mask = createAttentionMask(device, end, config, { group });
      const backMask = createAttentionMask(device, front, config, { lseStride: U });
      expect(() =>
        createAttentionBackward(
          device,
          mask,
          { NH, HS },
          { qkv: mask.buffer, out: mask.buffer, lse: mask.buffer, dOut: mask.buffer, delta: mask.buffer, dqkv: mask.buffer },
        ),
      ).toThrow('forward only');
      const buffers = {
        qkv: uploadStorage(device, 'test.qkv', qkv),
        dOut: uploadStorage(device, 'test.dOut', dOut),
        out: createStorage(device, 'test.out', U * C * 4),
        lse: createStorage(device, 'test.lse', NH * U * 4),
        delta: createStorage(device, 'test.delta', NH * U * 4),
        dqkv: createStorage(device, 'test.dqkv', S * 3 * C * 4),
      };
      await submitValidated(device, 'test.grouped', () => [
        createAttentionForward(device, mask, { NH, HS }, buffers),
        ...createAttentionBackward(device, backMask, { NH, HS }, buffers),
      ]);
      const out = await readFloat32(device, buffers.out, U * C);
      const lse = await readFloat32(device, buffers.lse, NH * U);
      const dqkv = await readFloat32(device, buffers.dqkv, S * 3 * C);
      groups.forEach((g, gi) => {
        const rows = rowsOf[gi];
        const n = rows.length;
        const gather = (src: Float32Array, width: number, which: number[]) => {
          const outRows = new Float32Array(which.length * width);
          which.forEach((row, r) => outRows.set(src.subarray(row * width, (row + 1) * width), r * width));
          return outRows;
        };
        const want = attentionRef(gather(qkv, 3 * C, rows), g.end, n, C, NH);
        expectClose(gather(out, C, rows), want.out, { abs: FORWARD_ABS, label: `group ${gi}: out` });
        for (let h = 0; h < NH; h++) {
          rows.forEach((row, r) => expect(Math.abs(lse[h * U + row] - want.lse[h * n + r]), `group ${gi} lse`).toBeLessThanOrEqual(FORWARD_ABS));
        }
        // The backward over the front rows: group g's first L rows among themselves.
        const frontRows = rows.slice(0, g.L);
        const clipped = Array.from(g.end.subarray(0, g.L), (e) => Math.min(e, g.L));
        const wantD = attentionBackwardRef(gather(qkv, 3 * C, frontRows), clipped, gather(dOut, C, frontRows), g.L, C, NH);
        expectClose(gather(dqkv, 3 * C, frontRows), wantD, { abs: BACKWARD_ABS, rel: BACKWARD_REL, label: `group ${gi}: dqkv` });
      });
      // The block lists hold only tile pairs with a visible pair of one group.
      const seen = new Set<number>();
      for (let i = 0; i < U; i++)
        for (let k = 0; k <= i; k++) if (k <= i && i < end[k] && group[k] === group[i]) seen.add(Math.floor(i / config.BQ) * U + Math.floor(k / config.BK));
      expect(mask.tiles.pairs).toBe(seen.size);
      for (const b of Object.values(buffers)) b.destroy();
      mask.destroy();
      backMask.destroy();
    }
  });

  it('rejects head sizes it cannot hold and buffers shorter than their tensors', () => {
    const mask = createAttentionMask(gpu.device, causalEnd(4), ROWS);
    const small = createStorage(gpu.device, 'test.small', 4);
    const buffers = { qkv: small, out: small, lse: small };
    for (const HS of [ATTENTION_LONG_MAX_HS + 4, 6]) {
      expect(() => createAttentionForward(gpu.device, mask, { NH: 1, HS }, buffers)).toThrow(`head size ${HS}`);
    }
    expect(() => createAttentionForward(gpu.device, mask, { NH: 1, HS: 8 }, buffers)).toThrow(/qkv/);
    small.destroy();
    mask.destroy();
  });
});
