// GPT-2 encoding of text without a space (one pre-tokenized piece as long as the text): time per
// character at 10k, 100k and 1M characters of letters, emoji and CJK must stay flat (within 2×), as
// the heap merge of src/rollout/bpe.ts makes it; gpt-tokenizer's own merge, for comparison, at 10k and
// 30k (it rescans the piece after every merge: quadratic). CPU time, best of 3 runs of 1M characters
// in all per size (100 × 10k, 10 × 100k, 1 × 1M), after warm-ups
// (GPT-2's pair table built once, the merge's code compiled on each alphabet). Exits 1 when the 1M per-character time exceeds 2× the 10k one.
// Run: node --import ./scripts/register.mjs bench/tokenize.ts
import { encode as referenceEncode } from 'gpt-tokenizer/encoding/r50k_base';
import { loadTokenizer } from '../src/rollout/tokenizer';

const gpt2 = (await loadTokenizer('gpt2'))!;
const SIZES = [10_000, 100_000, 1_000_000];
const ALPHABETS = { letters: 'abcdefghijklmnopqrstuvwxyz', emoji: '😀🚀🎉🧪', cjk: '語言模型訓練' };
const text = (alphabet: string, n: number) =>
  Array.from({ length: n }, (_, i) => [...alphabet][(i * 7 + (i >> 3)) % [...alphabet].length])
    .join('')
    .slice(0, n);

/**
 * The CPU time (ms) of `f`, best of `runs`: CPU time, not wall time, so that a machine shared with
 * other work (a long run is preempted more often than a short one) does not bend the ratio.
 */
function best(f: () => unknown, runs = 3): number {
  let min = Infinity;
  for (let r = 0; r < runs; r++) {
    const t = process.cpuUsage();
    f();
    const used = process.cpuUsage(t);
    min = Math.min(min, (used.user + used.system) / 1000);
  }
  return min;
}

gpt2.encode(text('abc', 1000)); // builds the pair table
const ROUNDS = 5;
let worst = 0;
for (const [name, alphabet] of Object.entries(ALPHABETS)) {
  const texts = SIZES.map((n) => text(alphabet, n));
  const tokens = texts.map((t) => gpt2.encode(t).length); // also the warm-up
  // Rounds interleave the sizes, so a busy moment of the machine weighs on all of them alike; best round per size.
  const ms = SIZES.map(() => Infinity);
  for (let round = 0; round < ROUNDS; round++) {
    SIZES.forEach((n, k) => {
      const repeat = 1_000_000 / n; // every measurement encodes 1M characters in all
      ms[k] = Math.min(
        ms[k],
        best(() => {
          for (let r = 0; r < repeat; r++) gpt2.encode(texts[k]);
        }, 1) / repeat,
      );
    });
  }
  const perChar = SIZES.map((n, k) => (ms[k] * 1000) / n);
  SIZES.forEach((n, k) => {
    console.log(`gpt2 ${name.padEnd(7)} ${String(n).padStart(9)} chars: ${tokens[k]} tokens in ${ms[k].toFixed(1)} ms, ${perChar[k].toFixed(3)} µs/char`);
  });
  const ratio = Math.max(...perChar) / Math.min(...perChar);
  worst = Math.max(worst, ratio);
  console.log(`gpt2 ${name}: per-char time, slowest size / fastest = ${ratio.toFixed(2)}`);
}
for (const n of [10_000, 30_000]) {
  const t = text(ALPHABETS.letters, n);
  const ms = best(() => referenceEncode(t, { disallowedSpecial: new Set() }), 1);
  console.log(`gpt-tokenizer's own merge, letters ${n} chars: ${ms.toFixed(0)} ms, ${((ms * 1000) / n).toFixed(3)} µs/char`);
}
console.log(`worst per-char ratio across 10k..1M: ${worst.toFixed(2)} (limit 2)`);
process.exit(worst <= 2 ? 0 : 1);
