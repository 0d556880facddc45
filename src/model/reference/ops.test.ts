import { describe, expect, it } from 'vitest';
import { expectClose } from '../../testing/close';
import { createRng } from '../../util/prng';
import { dot, finiteDifference, randomNormal } from './gradcheck';
import {
  attentionBackwardRef,
  attentionRef,
  embeddingBackwardRef,
  embeddingRef,
  geluBackwardRef,
  geluRef,
  layernormBackwardRef,
  layernormRef,
  logsoftmaxGatherBackwardRef,
  logsoftmaxGatherRef,
  matmulBackwardRef,
  matmulRef,
} from './ops';

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

describe('geluRef', () => {
  it('matches the tanh form at known points', () => {
    // Values from Python: 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))).
    const want = [0.8411919906082768, -0.15880800939172324, 0.34571400982514394, 2.996362607918227, -0.0036373920817729943, 0];
    expectClose(geluRef([1, -1, 0.5, 3, -3, 0]), want, { abs: 1e-15, label: 'gelu' });
  });

  it('backward matches finite differences', () => {
    const rng = createRng(1);
    const x = randomNormal(rng, 13, 2);
    const g = randomNormal(rng, 13);
    const numeric = finiteDifference((xx) => dot(geluRef(xx), g), x);
    expectClose(geluBackwardRef(x, g), numeric, { ...FD, label: 'dgelu' });
  });
});

describe('matmulRef', () => {
  it('computes a hand-worked product with bias', () => {
    // (2,3)·(3,2) + (2)
    const x = [1, 2, 3, 4, 5, 6];
    const w = [1, -1, 0, 2, 0.5, 0];
    const out = matmulRef(x, w, [10, 20], 2, 3, 2);
    expect(Array.from(out)).toEqual([1 + 0 + 1.5 + 10, -1 + 4 + 0 + 20, 4 + 0 + 3 + 10, -4 + 10 + 0 + 20]);
  });

  it('with gelu equals geluRef of the plain product', () => {
    const rng = createRng(2);
    const [M, K, N] = [3, 5, 7];
    const x = randomNormal(rng, M * K);
    const w = randomNormal(rng, K * N);
    const b = randomNormal(rng, N);
    expectClose(matmulRef(x, w, b, M, K, N, true), geluRef(matmulRef(x, w, b, M, K, N)), { abs: 0, label: 'fused gelu' });
  });

  for (const gelu of [false, true]) {
    it(`backward (gelu ${gelu}) matches finite differences for x, w and bias`, () => {
      const rng = createRng(3);
      const [M, K, N] = [3, 5, 7];
      const x = randomNormal(rng, M * K);
      const w = randomNormal(rng, K * N, 0.5);
      const b = randomNormal(rng, N);
      const g = randomNormal(rng, M * N);
      const pre = gelu ? matmulRef(x, w, b, M, K, N) : null;
      const grads = matmulBackwardRef(x, w, g, M, K, N, pre);
      const loss = (xx: Float64Array, ww: Float64Array, bb: Float64Array) => dot(matmulRef(xx, ww, bb, M, K, N, gelu), g);
      expectClose(
        grads.dx,
        finiteDifference((v) => loss(v, w, b), x),
        { ...FD, label: 'dx' },
      );
      expectClose(
        grads.dw,
        finiteDifference((v) => loss(x, v, b), w),
        { ...FD, label: 'dw' },
      );
      expectClose(
        grads.dbias,
        finiteDifference((v) => loss(x, w, v), b),
        { ...FD, label: 'dbias' },
      );
    });
  }
});

describe('layernormRef', () => {
  it('normalises each row to mean 0 and variance var/(var+eps), then applies weight and bias', () => {
    const rng = createRng(4);
    const [N, C] = [3, 9];
    const x = randomNormal(rng, N * C, 3);
    const ones = new Float64Array(C).fill(1);
    const { out, mean, rstd } = layernormRef(x, ones, new Float64Array(C), N, C);
    for (let i = 0; i < N; i++) {
      const row = Array.from(x.subarray(i * C, (i + 1) * C));
      const m = row.reduce((a, b) => a + b, 0) / C;
      const v = row.reduce((a, b) => a + (b - m) ** 2, 0) / C;
      expect(mean[i]).toBeCloseTo(m, 12);
      expect(rstd[i]).toBeCloseTo(1 / Math.sqrt(v + 1e-5), 12);
      const o = Array.from(out.subarray(i * C, (i + 1) * C));
      const om = o.reduce((a, b) => a + b, 0) / C;
      const ov = o.reduce((a, b) => a + (b - om) ** 2, 0) / C;
      expect(Math.abs(om)).toBeLessThan(1e-14);
      expect(ov).toBeCloseTo(v / (v + 1e-5), 12);
    }
    const w = randomNormal(rng, C);
    const b = randomNormal(rng, C);
    const affine = layernormRef(x, w, b, N, C).out;
    const want = out.map((o, j) => o * w[j % C] + b[j % C]);
    expectClose(affine, want, { abs: 1e-14, label: 'affine' });
  });

  it('backward matches finite differences for x, weight and bias', () => {
    const rng = createRng(5);
    const [N, C] = [3, 7];
    const x = randomNormal(rng, N * C, 2);
    const w = randomNormal(rng, C);
    const b = randomNormal(rng, C);
    const g = randomNormal(rng, N * C);
    const { mean, rstd } = layernormRef(x, w, b, N, C);
    const grads = layernormBackwardRef(x, w, mean, rstd, g, N, C);
    const loss = (xx: Float64Array, ww: Float64Array, bb: Float64Array) => dot(layernormRef(xx, ww, bb, N, C).out, g);
    expectClose(
      grads.dx,
      finiteDifference((v) => loss(v, w, b), x),
      { ...FD, label: 'dx' },
    );
    expectClose(
      grads.dweight,
      finiteDifference((v) => loss(x, v, b), w),
      { ...FD, label: 'dweight' },
    );
    expectClose(
      grads.dbias,
      finiteDifference((v) => loss(x, w, v), b),
      { ...FD, label: 'dbias' },
    );
  });
});

describe('embeddingRef', () => {
  it('adds the token row and the position row', () => {
    const C = 2;
    const wte = [0, 1, 10, 11, 20, 21]; // V = 3
    const wpe = [100, 200, 300, 400]; // P = 2
    const out = embeddingRef([2, 0, 2], [0, 1, 1], wte, wpe, C);
    expect(Array.from(out)).toEqual([120, 221, 300, 401, 320, 421]);
  });

  it('backward accumulates repeated tokens and positions (matches finite differences)', () => {
    const rng = createRng(6);
    const [V, P, C] = [5, 4, 3];
    const tokens = [1, 4, 1, 0, 1];
    const positions = [0, 1, 2, 1, 3];
    const wte = randomNormal(rng, V * C);
    const wpe = randomNormal(rng, P * C);
    const g = randomNormal(rng, tokens.length * C);
    const { dwte, dwpe } = embeddingBackwardRef(tokens, positions, g, V, P, C);
    expectClose(
      dwte,
      finiteDifference((v) => dot(embeddingRef(tokens, positions, v, wpe, C), g), wte),
      { ...FD, label: 'dwte' },
    );
    expectClose(
      dwpe,
      finiteDifference((v) => dot(embeddingRef(tokens, positions, wte, v, C), g), wpe),
      { ...FD, label: 'dwpe' },
    );
  });
});

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

describe('logsoftmaxGatherRef', () => {
  it('equals log(softmax) at the gathered tokens and its exp sums to 1 over the vocabulary', () => {
    const rng = createRng(11);
    const [M, V] = [3, 5];
    const logits = randomNormal(rng, M * V, 4);
    const rows = [0, 2, 2, 1];
    const tokens = [4, 0, 3, 1];
    const got = logsoftmaxGatherRef(logits, V, rows, tokens);
    rows.forEach((r, j) => {
      const row = Array.from(logits.subarray(r * V, (r + 1) * V));
      const z = row.reduce((a, b) => a + Math.exp(b), 0);
      expect(Math.abs(got[j] - Math.log(Math.exp(row[tokens[j]]) / z))).toBeLessThan(1e-14);
    });
    const all = logsoftmaxGatherRef(logits, V, [1, 1, 1, 1, 1], [0, 1, 2, 3, 4]);
    expect(Math.abs(all.reduce((a, b) => a + Math.exp(b), 0) - 1)).toBeLessThan(1e-14);
  });

  it('is stable for huge logits', () => {
    const got = logsoftmaxGatherRef([1000, 1000, -1000], 3, [0], [0]);
    // 1000 - (1000 + ln 2): the subtraction costs ~10 bits, so 1e-12 rather than 1e-15.
    expect(Math.abs(got[0] + Math.LN2)).toBeLessThan(1e-12);
  });

  it('backward (rows scored twice) matches finite differences', () => {
    const rng = createRng(12);
    const [M, V] = [3, 5];
    const logits = randomNormal(rng, M * V, 2);
    const rows = [0, 2, 2, 1];
    const tokens = [4, 0, 3, 1];
    const g = randomNormal(rng, rows.length);
    const got = logsoftmaxGatherBackwardRef(logits, V, M, rows, tokens, g);
    const numeric = finiteDifference((v) => dot(logsoftmaxGatherRef(v, V, rows, tokens), g), logits);
    expectClose(got, numeric, { ...FD, label: 'dlogits' });
  });
});
