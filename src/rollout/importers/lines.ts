// Line-by-line reading of a byte source, the same in Node (fs streams, Buffers), the browser
// (File.stream()) and tests (strings). Memory follows the longest line, not the file: importers
// of multi-megabyte session logs read them through this, never as one string.

/** Anything that yields the file's bytes (or text) in order; `open` is called once per pass. */
export type ByteSource = AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> | ReadableStream<Uint8Array>;

export type OpenSource = () => ByteSource;

export interface Line {
  /** The line without its terminator (`\n` or `\r\n`); a leading UTF-8 BOM is dropped. */
  text: string;
  /** 1-based, counting blank lines too, so it matches what an editor shows. */
  line: number;
  /** The last line of an input that does not end with a newline (a file still being written may end in a cut record). */
  unterminated?: true;
}

/** An OpenSource over text already in memory (tests, pasted input, small files). */
export function textSource(text: string): OpenSource {
  return () => [text];
}

async function* chunks(source: ByteSource): AsyncGenerator<Uint8Array | string> {
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') {
    const reader = (source as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  }
  yield* source as AsyncIterable<Uint8Array | string>;
}

/**
 * Decodes byte chunks as UTF-8, a sequence cut by a chunk's end completed by the next. Each piece is
 * decoded whole, not with `{stream: true}`: V8 (Node 20) returns streamed pieces as two-byte
 * strings, so a long line joined from them took two bytes a character; whole ASCII pieces stay one.
 */
function createUtf8Decoder() {
  // ignoreBOM: a U+FEFF at a chunk's start is text; the file's leading BOM is dropped by readLines.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  let carry: Uint8Array | null = null;
  return {
    decode(chunk: Uint8Array): string {
      let bytes = chunk;
      if (carry) {
        bytes = new Uint8Array(carry.length + chunk.length);
        bytes.set(carry);
        bytes.set(chunk, carry.length);
        carry = null;
      }
      // The last sequence's lead byte (at most 3 continuation bytes back): held back if incomplete.
      let lead = bytes.length - 1;
      while (lead >= 0 && lead > bytes.length - 4 && (bytes[lead] & 0xc0) === 0x80) lead--;
      let end = bytes.length;
      if (lead >= 0) {
        const b = bytes[lead];
        const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
        if (bytes.length - lead < need) end = lead;
      }
      if (end < bytes.length) carry = bytes.slice(end);
      return decoder.decode(bytes.subarray(0, end));
    },
    /** What is left (an incomplete sequence at the end of the input: replacement characters). */
    flush(): string {
      const rest = carry ? decoder.decode(carry) : '';
      carry = null;
      return rest;
    },
  };
}

/** Yields every line, blank ones included (importers skip those themselves, keeping the count). */
export async function* readLines(source: ByteSource): AsyncGenerator<Line> {
  const decoder = createUtf8Decoder();
  // The unfinished line as a list of fragments: a long line spread over many chunks is joined once.
  let pending: string[] = [];
  let line = 0;
  let first = true;
  const finish = (text: string): Line => {
    line++;
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return { text: text.endsWith('\r') ? text.slice(0, -1) : text, line };
  };
  for await (const chunk of chunks(source)) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk);
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      pending.push(text.slice(from, nl));
      // The fragments go before the line is handed on: they hold the chunks they were sliced from.
      const whole = pending.length === 1 ? pending[0] : pending.join('');
      pending = [];
      from = nl + 1;
      yield finish(whole);
    }
    if (from < text.length) pending.push(text.slice(from));
  }
  const tail = decoder.flush();
  if (tail) pending.push(tail);
  if (pending.length > 0) yield { ...finish(pending.join('')), unterminated: true };
}

/**
 * The first `max` non-blank lines of a text that parse as JSON (others are passed over; a leading
 * BOM is dropped): enough for format detection from the head of a file, whose last line may be cut.
 */
export function sampleRecords(text: string, max = 50): unknown[] {
  const out: unknown[] = [];
  for (let from = text.charCodeAt(0) === 0xfeff ? 1 : 0; from < text.length && out.length < max; ) {
    let to = text.indexOf('\n', from);
    if (to < 0) to = text.length;
    const line = text.slice(from, to).trim();
    from = to + 1;
    if (!line) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // a malformed or cut line says nothing about the format
    }
  }
  return out;
}
