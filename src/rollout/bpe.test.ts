// GPT-2's encoding in time linear in its input (the heap merge of bpe.ts for pieces longer than
// gpt2.ts's LONG_PIECE), and still exactly the reference's: gpt-tokenizer's own encoding, token for
// token, on generated text with and without spaces, long pieces of letters, emoji and CJK included.

import { encode as referenceEncode } from 'gpt-tokenizer/encoding/r50k_base';
import { describe, expect, it } from 'vitest';
import { createRng } from '../util/prng';
import { loadTokenizer } from './tokenizer';

const gpt2 = (await loadTokenizer('gpt2'))!;
const PLAIN = { disallowedSpecial: new Set<string>() };
const PARTS = ['a', 'b', 'e', 't', 'h', 'ing', 'tion', 'Z', 'q', 'é', '😀', '🧪', '中', '語', '1', '23', '.', ',', "'s", "'", '-', '\n', ' ', '  ', '\t'];

function generated(seed: number, length: number, spaces: boolean): string {
  const rng = createRng(seed);
  let text = '';
  while (text.length < length) {
    const part = PARTS[rng.int(PARTS.length)];
    if (!spaces && /\s/.test(part)) continue;
    text += part;
  }
  return text;
}

/** CPU milliseconds per character of encoding `text`, best of 3 runs of `repeat` encodings. */
function perChar(text: string, repeat: number): number {
  let best = Infinity;
  for (let run = 0; run < 3; run++) {
    const t = process.cpuUsage();
    for (let r = 0; r < repeat; r++) gpt2.encode(text);
    const used = process.cpuUsage(t);
    best = Math.min(best, (used.user + used.system) / 1000 / repeat);
  }
  return best / text.length;
}

describe('GPT-2 BPE on long pieces', () => {
  it('equals the reference encoding token for token (40 generated texts, pieces up to 2,000 characters)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const text = generated(seed, 200 + ((seed * 97) % 1800), seed % 2 === 0);
      expect(gpt2.encode(text), `seed ${seed}`).toEqual(referenceEncode(text, PLAIN));
    }
    // Long runs of one kind: the piece is the whole text.
    for (const text of ['ab'.repeat(1500), 'x'.repeat(3000), '😀'.repeat(700), '語言模型'.repeat(300), '-'.repeat(2000), '9'.repeat(1000)]) {
      expect(gpt2.encode(text)).toEqual(referenceEncode(text, PLAIN));
      expect(gpt2.decode(gpt2.encode(text))).toBe(text);
    }
  });

  it('has no quadratic blow-up: 200k characters without a space well within bounds, per-char time at 200k < 3× that at 20k', () => {
    gpt2.encode(generated(7, 20_000, false)); // builds the pair table, compiles the merge
    for (const [name, seed] of [
      ['mixed', 11],
      ['letters', 0],
    ] as const) {
      const long = seed ? generated(seed, 200_000, false) : 'abcdefghijklmnopqrstuvwxyz'.repeat(200_000 / 26);
      const short = long.slice(0, 20_000);
      const started = performance.now();
      const tokens = gpt2.encode(long);
      expect(performance.now() - started, name).toBeLessThan(10_000); // the quadratic merge takes minutes here
      expect(tokens.length).toBeGreaterThan(long.length / 8);
      const ratio = perChar(long, 1) / perChar(short, 10);
      expect(ratio, `${name}: per-char time 200k / 20k`).toBeLessThan(3);
    }
  });
});
