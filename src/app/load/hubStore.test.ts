// The page's check of a Hub file's SHA-256 reads the file as a stream, so a file of any size is hashed (WebCrypto
// would need it whole in memory). The streamed hash must be the file's hash whatever the chunking.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blobSha256 } from './hubStore';

describe('blobSha256', () => {
  it("equals the file's SHA-256 for an empty file, a small one and one read in many chunks", async () => {
    for (const size of [0, 1000, 5 * 2 ** 20 + 13]) {
      const data = randomBytes(size);
      const parts = [data.subarray(0, size >> 2), data.subarray(size >> 2)];
      expect(await blobSha256(new Blob(parts))).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });

  it('changes when one byte changes', async () => {
    const data = randomBytes(70_000);
    const before = await blobSha256(new Blob([data]));
    data[35_000] ^= 1;
    expect(await blobSha256(new Blob([data]))).not.toBe(before);
  });
});
