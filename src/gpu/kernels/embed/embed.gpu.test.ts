// embed.wgsl against its reference: the embedding rows of tokens from an F32, F16 or BF16 table, whole
// or split in vocabulary blocks bound one at a time (each launch writes only its block's tokens).

import { describe, it } from 'vitest';
import { createRng } from '../../../util/prng';
import { expectClose } from '../../../testing/close';
import { createStorage, readFloat32, uploadStorage } from '../../runtime/buffers';
import type { Gpu } from '../../runtime/device';
import { useGpu } from '../../runtime/gpu.testing';
import { submitValidated } from '../../runtime/kernel';
import { rowBlocks } from '../../runtime/limits';
import { DTYPES, randomWeights, uploadBytes } from '../kernels.testing';
import { dtypeBytes } from '../weight-format/weight-format';
import { createEmbed } from './embed';
import { embedReference } from './embed.reference';

let gpu: Gpu;
useGpu((g) => (gpu = g));

describe('embed', () => {
  for (const dtype of DTYPES) {
    for (const blockRows of [0, 64]) {
      it(`${dtype} table (V 300, C 64)${blockRows ? ` in blocks of ${blockRows} rows` : ''}: exact`, async () => {
        const { device } = gpu;
        const [V, C, N] = [300, 64, 37];
        const rng = createRng(V + C + blockRows);
        const table = randomWeights(rng, dtype, V * C);
        const tokens = Uint32Array.from({ length: N }, (_, i) => (i === 0 ? V - 1 : rng.int(V)));
        const rowBytes = C * dtypeBytes(dtype);
        const blocks = blockRows ? rowBlocks(V, rowBytes / 4, blockRows * rowBytes, 'test table') : [{ first: 0, end: V }];
        const out = createStorage(device, 'test.out', N * C * 4);
        await submitValidated(device, 'test.embed', () =>
          createEmbed(device, { N, C }, dtype, {
            tokens: uploadStorage(device, 'test.tokens', tokens),
            table: blocks.map((block) => ({
              block,
              ref: uploadBytes(device, 'test.table', table.bytes.subarray(block.first * rowBytes, block.end * rowBytes)),
            })),
            out,
          }),
        );
        expectClose(await readFloat32(device, out, N * C), embedReference(table.values, tokens, C), { abs: 0, label: 'out' });
      });
    }
  }
});
