// Seeded PRNG: xoshiro128** seeded through splitmix32. Bit-identical in every JavaScript engine:
// only 32-bit integer ops and IEEE +, *, /, sqrt are used (Math.log is not required to be correctly
// rounded, so normal() uses its own logarithm built from exact operations).

export interface Rng {
  /** Uniform float in [0, 1), 32 bits of resolution. */
  next(): number;
  /** Uniform unsigned 32-bit integer. */
  nextU32(): number;
  /** Standard normal (mean 0, std 1), Marsaglia's polar method. */
  normal(): number;
  /** Uniform integer in [0, n), unbiased; 1 <= n <= 2^32. */
  int(n: number): number;
}

function splitmix32(state: number): { value: number; state: number } {
  state = (state + 0x9e3779b9) | 0;
  let z = state;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return { value: (z ^ (z >>> 16)) >>> 0, state };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

const TWO_POW_32 = 4294967296;

/** Any finite number is a seed; its integer part picks the stream (all 53 bits of it count). */
export function createRng(seed: number): Rng {
  if (!Number.isFinite(seed)) throw new Error(`createRng: seed must be a finite number, got ${seed}`);
  const whole = Math.trunc(seed);
  let sm = (whole % TWO_POW_32) | 0;
  sm ^= Math.imul(Math.floor(whole / TWO_POW_32) | 0, 0x27d4eb2f);
  const state: number[] = [];
  for (let i = 0; i < 4; i++) {
    const r = splitmix32(sm);
    state.push(r.value);
    sm = r.state;
  }
  if ((state[0] | state[1] | state[2] | state[3]) === 0) state[0] = 1;
  return createRngFromState(state);
}

/** xoshiro128** started from an explicit 128-bit state (four u32, not all zero). */
export function createRngFromState(state: ArrayLike<number>): Rng {
  const s = Uint32Array.from(state);
  if (s.length !== 4 || (s[0] | s[1] | s[2] | s[3]) === 0) throw new Error('createRngFromState: needs four u32 words, not all zero');

  function nextU32(): number {
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0;
    const t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  const next = () => nextU32() / TWO_POW_32;

  function normal(): number {
    for (;;) {
      const u = 2 * next() - 1;
      const v = 2 * next() - 1;
      const r = u * u + v * v;
      if (r > 0 && r < 1) return u * Math.sqrt((-2 * exactLog(r)) / r);
    }
  }

  function int(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > TWO_POW_32) throw new Error(`Rng.int: n must be an integer in [1, 2^32], got ${n}`);
    const limit = TWO_POW_32 - (TWO_POW_32 % n); // largest multiple of n that fits: reject above it
    for (;;) {
      const r = nextU32();
      if (r < limit) return r % n;
    }
  }

  return { next, nextU32, normal, int };
}

/**
 * Natural logarithm of a positive finite x from exact IEEE operations only (same bits everywhere),
 * accurate to a few ulp: x = m·2^e with m in [√½, √2), ln m = 2·atanh(s), s = (m-1)/(m+1).
 */
export function exactLog(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) throw new Error(`exactLog: needs a positive finite number, got ${x}`);
  let m = x;
  let e = 0;
  while (m >= Math.SQRT2) {
    m /= 2;
    e++;
  }
  while (m < Math.SQRT1_2) {
    m *= 2;
    e--;
  }
  const s = (m - 1) / (m + 1);
  const s2 = s * s;
  // |s| < 0.1716, s² < 0.0295: 14 terms of the atanh series reach below 1e-21 relative.
  let term = s;
  let sum = 0;
  for (let k = 1; k < 30; k += 2) {
    sum += term / k;
    term *= s2;
  }
  return 2 * sum + e * Math.LN2;
}
