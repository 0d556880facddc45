// The float64 reference against itself: known values, finite differences, the tree mask's meaning.
import { describe, expect, it } from 'vitest';
import { expectClose } from '../../../testing/close';
import { createRng } from '../../../util/prng';
import { dot, finiteDifference, randomNormal } from '../../../model/reference/gradcheck';
import { attentionBackwardRef, attentionRef } from './attention.reference';

// Finite differences in float64 with h = 1e-5: truncation ~1e-10, round-off ~1e-11.
const FD = { abs: 1e-7, rel: 1e-6 };

/** docs/tree.md worked example, packed order 0..8 | 9,10,7′,8′,11,12,13,14 | 13′,14′,15,16. */
const TREE_END = [21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21];

const ENDS: Record<string, number[]> = {
  causal: Array(7).fill(7),
  tree: TREE_END,
  'block-diagonal (2, 4, 3)': [2, 2, 6, 6, 6, 6, 9, 9, 9],
  'causal with two padding rows (end[k] = k)': [3, 3, 3, 3, 4],
};

/** Attention written the textbook way: full score matrix, -Infinity where masked, softmax, P·V. */
function naiveAttention(qkv: Float64Array, end: number[], N: number, C: number, NH: number) {
  const HS = C / NH;
  const out = new Float64Array(N * C);
  const lse = new Float64Array(NH * N);
  for (let h = 0; h < NH; h++) {
    for (let i = 0; i < N; i++) {
      const s: number[] = [];
      for (let k = 0; k < N; k++) {
        let d = 0;
        for (let j = 0; j < HS; j++) d += qkv[i * 3 * C + h * HS + j] * qkv[k * 3 * C + C + h * HS + j];
        s.push(k <= i && i < end[k] ? d / Math.sqrt(HS) : -Infinity);
      }
      const z = s.reduce((a, b) => a + Math.exp(b), 0);
      lse[h * N + i] = Math.log(z);
      if (z === 0) continue;
      for (let k = 0; k < N; k++) {
        const p = Math.exp(s[k]) / z;
        for (let j = 0; j < HS; j++) out[i * C + h * HS + j] += p * qkv[k * 3 * C + 2 * C + h * HS + j];
      }
    }
  }
  return { out, lse };
}

describe('attentionRef', () => {
  const [C, NH] = [6, 2];

  for (const [name, end] of Object.entries(ENDS)) {
    it(`matches textbook masked attention (${name})`, () => {
      const N = end.length;
      const qkv = randomNormal(createRng(7), N * 3 * C);
      const got = attentionRef(qkv, end, N, C, NH);
      const want = naiveAttention(qkv, end, N, C, NH);
      expectClose(got.out, want.out, { abs: 1e-13, label: 'out' });
      for (let j = 0; j < want.lse.length; j++) {
        if (want.lse[j] === -Infinity) expect(got.lse[j]).toBe(-Infinity);
        else expect(Math.abs(got.lse[j] - want.lse[j])).toBeLessThan(1e-13);
      }
    });

    it(`backward matches finite differences (${name})`, () => {
      const N = end.length;
      const rng = createRng(8);
      const qkv = randomNormal(rng, N * 3 * C);
      const g = randomNormal(rng, N * C);
      const dqkv = attentionBackwardRef(qkv, end, g, N, C, NH);
      const numeric = finiteDifference((v) => dot(attentionRef(v, end, N, C, NH).out, g), qkv);
      expectClose(dqkv, numeric, { ...FD, label: 'dqkv' });
    });
  }

  it('gives a fully masked row zeros, lse -Infinity and no gradient', () => {
    const end = ENDS['causal with two padding rows (end[k] = k)']; // rows 3 and 4 see nothing
    const N = end.length;
    const qkv = randomNormal(createRng(9), N * 3 * C);
    const { out, lse } = attentionRef(qkv, end, N, C, NH);
    expect(Array.from(out.subarray(3 * C))).toEqual(new Array(2 * C).fill(0));
    expect([lse[3], lse[4], lse[N + 3], lse[N + 4]]).toEqual([-Infinity, -Infinity, -Infinity, -Infinity]);
    const dqkv = attentionBackwardRef(qkv, end, new Float64Array(N * C).fill(1), N, C, NH);
    expect(Array.from(dqkv.subarray(3 * 3 * C))).toEqual(new Array(2 * 3 * C).fill(0));
  });

  it('on the packed tree equals causal attention on each branch separately (op-level Theorem 1)', () => {
    // Packed indices of each branch's root-to-leaf path in the worked example.
    const branches = [
      [0, 1, 2, 3, 4, 5, 6, 7, 8],
      [0, 1, 9, 10, 11, 12, 13, 14, 15, 16],
      [0, 1, 9, 10, 17, 18, 19, 20],
    ];
    const N = TREE_END.length;
    const qkv = randomNormal(createRng(10), N * 3 * C);
    const packed = attentionRef(qkv, TREE_END, N, C, NH).out;
    for (const path of branches) {
      const n = path.length;
      const sub = new Float64Array(n * 3 * C);
      path.forEach((p, i) => sub.set(qkv.subarray(p * 3 * C, (p + 1) * 3 * C), i * 3 * C));
      const alone = attentionRef(sub, new Array(n).fill(n), n, C, NH).out;
      const leaf = path[n - 1];
      // Every index on the path is checked, the leaf included.
      path.forEach((p, i) =>
        expectClose(packed.subarray(p * C, (p + 1) * C), alone.subarray(i * C, (i + 1) * C), { abs: 1e-14, label: `index ${p} (leaf ${leaf})` }),
      );
    }
  });
});
