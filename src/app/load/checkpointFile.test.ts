// A dropped file goes to the scoring worker when it is a safetensors checkpoint, by name or by its
// header, and to the rollout reader otherwise.
import { describe, expect, it } from 'vitest';
import { randomWeights } from '../../model/random-weights';
import { publishedGpt2Checkpoint } from '../../testing/publishedGpt2';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFamilyFolder } from '../../testing/familyFolders';
import { familyWeightsName, isCheckpointFile } from './checkpointFile';

const checkpoint = new Uint8Array(
  publishedGpt2Checkpoint(randomWeights({ vocabSize: 64, nEmbd: 64, nLayer: 1, nHead: 1, nPositions: 16 }, 1)),
) as Uint8Array<ArrayBuffer>;
const named = (parts: BlobPart[], name: string) => Object.assign(new Blob(parts), { name });

describe('isCheckpointFile', () => {
  it('takes model.safetensors by its name, and a checkpoint under any name by its header', async () => {
    expect(await isCheckpointFile(named([checkpoint], 'model.safetensors'))).toBe(true);
    expect(await isCheckpointFile(named([checkpoint], 'download (1)'))).toBe(true);
  });

  it('leaves rollout files, sets and logs to the rollout reader', async () => {
    expect(await isCheckpointFile(named(['{"format":"memorywalker.rollout/v1","id":"a"}'], 'a.json'))).toBe(false);
    expect(await isCheckpointFile(named(['\uFEFF{"messages":[]}\n{"messages":[]}\n'], 'chat.jsonl'))).toBe(false);
    expect(await isCheckpointFile(named(['[1,2,3]'], 'x'))).toBe(false);
    expect(await isCheckpointFile(named(['{}'], 'x'))).toBe(false);
  });
});

describe('familyWeightsName', () => {
  it("names a family model's first own tensor from the header alone; a GPT-2 checkpoint and other files are none", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mw-family-weights-'));
    try {
      const qwen3 = writeFamilyFolder(join(dir, 'qwen3'), 'qwen3');
      const llama = writeFamilyFolder(join(dir, 'llama'), 'llama');
      expect(await familyWeightsName(new Blob([readFileSync(join(qwen3.dir, 'model.safetensors'))]))).toBe('model.embed_tokens.weight');
      // The second of Llama's two shards holds layers and the head, not the embedding.
      expect(await familyWeightsName(new Blob([readFileSync(join(llama.dir, 'model-00002-of-00002.safetensors'))]))).toMatch(/^model\.layers\.\d+\./);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await familyWeightsName(new Blob([checkpoint]))).toBeNull();
    expect(await familyWeightsName(new Blob(['{"format":"memorywalker.rollout/v1"}']))).toBeNull();
    expect(await familyWeightsName(new Blob([new Uint8Array(4)]))).toBeNull();
  });
});
