// The line reader: same lines whatever the chunking (characters and CRLFs cut apart), from
// strings, byte iterables and web ReadableStreams.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLines, sampleRecords, textSource, type ByteSource } from './lines';

async function collect(source: ByteSource): Promise<[number, string][]> {
  const out: [number, string][] = [];
  for await (const { line, text } of readLines(source)) out.push([line, text]);
  return out;
}

const cut = (bytes: Uint8Array, cuts: number[]): Uint8Array[] => {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const c of [...at, bytes.length]) {
    out.push(bytes.slice(from, c));
    from = c;
  }
  return out;
};

describe('readLines', () => {
  it('numbers lines from 1, keeps blank lines, strips CR and a BOM, yields a last line without newline', async () => {
    expect(await collect(textSource('\ufeffa\r\n\nb é\nlast')())).toEqual([
      [1, 'a'],
      [2, ''],
      [3, 'b é'],
      [4, 'last'],
    ]);
    expect(await collect(textSource('x\n')())).toEqual([[1, 'x']]);
    expect(await collect(textSource('')())).toEqual([]);
  });

  it('gives the same lines however the bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constantFrom('\n', '\r\n', 'é', '😀', '{"a":1}', ' '), fc.string({ maxLength: 5 })), { maxLength: 20 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (parts, cuts) => {
          const text = parts.join('');
          const bytes = new TextEncoder().encode(text);
          const expected = text === '' ? [] : text.split('\n').map((t, i) => [i + 1, t.replace(/\r$/, '')]);
          if (text.endsWith('\n')) expected.pop();
          expect(await collect(cut(bytes, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('keeps a U+FEFF that starts a later chunk, and reads bad or cut UTF-8 as replacement characters', async () => {
    const bytes = new TextEncoder().encode('a\n\ufeffb\n');
    expect(await collect(cut(bytes, [2, 3, 4]))).toEqual([
      [1, 'a'],
      [2, '\ufeffb'],
    ]);
    // 0xff is never UTF-8; a file cut inside a 3-byte character ends with the replacement character.
    expect(await collect([Uint8Array.of(0x61, 0xff, 0x0a), Uint8Array.of(0x62, 0xe2, 0x82)])).toEqual([
      [1, 'a\ufffd'],
      [2, 'b\ufffd'],
    ]);
  });

  it('reads a web ReadableStream (what File.stream() gives in the browser)', async () => {
    const bytes = new TextEncoder().encode('{"n":1}\n{"n":2}\n');
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of cut(bytes, [3, 9, 10])) controller.enqueue(chunk);
        controller.close();
      },
    });
    expect(await collect(stream)).toEqual([
      [1, '{"n":1}'],
      [2, '{"n":2}'],
    ]);
  });
});

describe('sampleRecords', () => {
  it('parses the first lines, passing over malformed or cut ones', () => {
    expect(sampleRecords('{"a":1}\nnot json\n\n{"b":2}\n{"c":', 10)).toEqual([{ a: 1 }, { b: 2 }]);
    expect(sampleRecords('1\n2\n3\n4', 2)).toEqual([1, 2]);
  });
});
