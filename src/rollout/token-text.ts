// A token's bytes as readable text, shared by the byte-level BPE tokenizers (gpt2.ts, tokenizer-hf.ts):
// the characters they hold, control characters and bytes of a split multi-byte character as escapes.

/** Length of the valid UTF-8 sequence starting at bytes[i], or 0 when none starts there. */
function utf8SequenceLength(bytes: Uint8Array, i: number): number {
  const b = bytes[i];
  const need = b < 0x80 ? 1 : b >= 0xc2 && b < 0xe0 ? 2 : b >= 0xe0 && b < 0xf0 ? 3 : b >= 0xf0 && b < 0xf5 ? 4 : 0;
  if (need === 0 || i + need > bytes.length) return 0;
  for (let k = 1; k < need; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return 0;
  const second = bytes[i + 1];
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
  if (need === 3 && ((b === 0xe0 && second < 0xa0) || (b === 0xed && second >= 0xa0))) return 0;
  if (need === 4 && ((b === 0xf0 && second < 0x90) || (b === 0xf4 && second >= 0x90))) return 0;
  return need;
}

const hex = (b: number) => `\\x${b.toString(16).padStart(2, '0')}`;
// biome-ignore lint/complexity/useSimpleNumberKeys: code points read best in hex
const ESCAPES: Readonly<Record<number, string>> = { 0x09: '\\t', 0x0a: '\\n', 0x0d: '\\r' };

/**
 * Readable text of some bytes: the characters they hold, control characters and bytes that are no
 * whole character on their own (a multi-byte character split across tokens) as escapes.
 */
export function visibleText(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const n = utf8SequenceLength(bytes, i);
    if (n === 0) {
      out += hex(bytes[i]);
      i++;
    } else if (n === 1) {
      const b = bytes[i];
      out += ESCAPES[b] ?? (b < 0x20 || b === 0x7f ? hex(b) : String.fromCharCode(b));
      i++;
    } else {
      const text = new TextDecoder().decode(bytes.subarray(i, i + n));
      const code = text.codePointAt(0)!;
      // C1 controls (U+0080..U+009F) print nothing either.
      out += code < 0xa0 ? `\\u${code.toString(16).padStart(4, '0')}` : text;
      i += n;
    }
  }
  return out;
}
