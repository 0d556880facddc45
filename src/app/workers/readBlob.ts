// Reads a Blob as UTF-8 text in chunks, reporting bytes read, so a 100 MB file shows progress.
// Runs in the worker (or anywhere a Blob streams).

export async function readBlobText(blob: Blob, onBytes: (done: number, total: number) => void): Promise<string> {
  const total = blob.size;
  const reader = blob.stream().getReader();
  const decoder = new TextDecoder('utf-8');
  const parts: string[] = [];
  let done = 0;
  let lastReport = 0;
  for (;;) {
    const { value, done: finished } = await reader.read();
    if (finished) break;
    done += value.byteLength;
    parts.push(decoder.decode(value, { stream: true }));
    const now = Date.now();
    if (now - lastReport > 40) {
      lastReport = now;
      onBytes(done, total);
    }
  }
  parts.push(decoder.decode());
  onBytes(total, total);
  return parts.join('');
}
