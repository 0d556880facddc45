import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FOLDER_DTYPE, writeFamilyFolder, type FamilyFolderKind } from '../../testing/familyFolders';
import { safetensorsHeader } from '../../util/safetensors';
import { familyParameters, parseFamilyConfig } from './config';
import { type ByteRangeReader, blobModelFolder, type ModelFolderFiles, openModelFolder, readFolderWeights } from './folder';
import { fileRangeReader, isModelFolderPath, nodeModelFolderFiles, openModelFolderPath } from './folder-node';
import { familyReferenceLogprobs } from './reference';

const TMP = mkdtempSync(join(tmpdir(), 'mw-family-folder-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** The folder's files, with every byte range read recorded. */
function recorded(dir: string): { files: ModelFolderFiles; reads: { file: string; bytes: number; size: number }[] } {
  const base = nodeModelFolderFiles(dir);
  const reads: { file: string; bytes: number; size: number }[] = [];
  return {
    reads,
    files: {
      ...base,
      async open(file) {
        const inner: ByteRangeReader = fileRangeReader(join(dir, file));
        const read = (b: number, e: number) => {
          reads.push({ file, bytes: e - b, size: inner.size });
          return inner.read(b, e);
        };
        return { size: inner.size, read };
      },
    },
  };
}

describe('model folders as the Hub publishes them', () => {
  for (const kind of ['qwen3', 'llama', 'qwen2'] as FamilyFolderKind[]) {
    it(`${kind}: opens from headers, streams every tensor once, raw ${FOLDER_DTYPE[kind]}, and scores like the values written`, async () => {
      const written = writeFamilyFolder(join(TMP, kind), kind, 3);
      const { files, reads } = recorded(written.dir);
      const folder = await openModelFolder(files);
      expect(folder.config).toEqual(written.config);
      expect(folder.weightFiles).toEqual(kind === 'llama' ? ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'] : ['model.safetensors']);
      const headerReads = reads.length;
      const seen: string[] = [];
      let bytes = 0;
      for await (const t of folder.source.tensors()) {
        expect(t.dtype).toBe(FOLDER_DTYPE[kind]);
        seen.push(t.name);
        bytes += t.data.length;
      }
      expect(seen.sort()).toEqual(
        familyParameters(written.config)
          .map((p) => p.name)
          .sort(),
      );
      expect(bytes).toBe(folder.source.totalBytes);
      const elements = familyParameters(written.config).reduce((n, p) => n + p.shape.reduce((a, b) => a * b, 1), 0);
      expect(folder.source.totalBytes).toBe(elements * (FOLDER_DTYPE[kind] === 'F32' ? 4 : 2));
      // One read per tensor after the headers, none of a whole weights file.
      expect(reads.length - headerReads).toBe(seen.length);
      for (const r of reads.filter((r) => r.file.endsWith('.safetensors'))) expect(r.bytes).toBeLessThan(r.size);

      const tensors = await readFolderWeights(folder.source);
      for (const [name, values] of written.tensors) expect(tensors.get(name)).toEqual(values);
      const input = { tokens: [259, 264, 44, 10], positions: [0, 1, 2, 3], end: [4, 4, 4, 4] };
      const targets = [{ predictor: 3, token: 7 }];
      expect(familyReferenceLogprobs({ config: folder.config, tensors }, input, targets)[0]).toBe(
        familyReferenceLogprobs({ config: written.config, tensors: written.tensors }, input, targets)[0],
      );
      expect(folder.tokenizer).toMatchObject({ model: { type: 'BPE' } });
      expect((folder.tokenizerConfig as { chat_template: string }).chat_template).toBe(written.chatTemplate);
      expect(folder.generationConfig).toMatchObject({ do_sample: true });
    });
  }

  it('the configs read as their families: Qwen3 head_dim 8 ≠ C/NH, Llama head_dim defaulted, llama3 and linear scaling, biases and norms', () => {
    const qwen3 = writeFamilyFolder(join(TMP, 'c-qwen3'), 'qwen3').config;
    const llama = writeFamilyFolder(join(TMP, 'c-llama'), 'llama').config;
    const qwen2 = writeFamilyFolder(join(TMP, 'c-qwen2'), 'qwen2').config;
    expect([qwen3.headDim, qwen3.qkNorm, qwen3.qkvBias, qwen3.tieWordEmbeddings, qwen3.ropeScaling.type]).toEqual([8, true, false, true, 'none']);
    expect([llama.headDim, llama.qkNorm, llama.qkvBias, llama.tieWordEmbeddings, llama.nKvHead]).toEqual([4, false, false, false, 2]);
    expect(llama.ropeScaling).toEqual({ type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 32 });
    expect([qwen2.qkvBias, qwen2.qkNorm, qwen2.ropeScaling]).toEqual([true, false, { type: 'linear', factor: 2 }]);
    expect(qwen3.name).toBe('c-qwen3'); // no _name_or_path: the folder's name
  });

  it('dropped files in the page: Blobs read by slice(), the same config and tensors', async () => {
    const written = writeFamilyFolder(join(TMP, 'blobs'), 'llama', 4);
    const blobs = new Map(readdirSync(written.dir).map((f) => [f, new Blob([readFileSync(join(written.dir, f))])]));
    const folder = await openModelFolder(blobModelFolder('blobs', blobs));
    expect(folder.config).toEqual(written.config);
    expect(await readFolderWeights(folder.source)).toEqual(written.tensors);
  });

  it('a single .safetensors file with a config.json beside it', async () => {
    const dir = join(TMP, 'single');
    writeFamilyFolder(dir, 'qwen2');
    writeFileSync(join(dir, 'tuned.safetensors'), readFileSync(join(dir, 'model.safetensors')));
    unlinkSync(join(dir, 'model.safetensors'));
    const folder = await openModelFolderPath(join(dir, 'tuned.safetensors'));
    expect(folder.weightFiles).toEqual(['tuned.safetensors']);
    expect(folder.config.architecture).toBe('Qwen2ForCausalLM');
    await expect(openModelFolderPath(dir)).rejects.toThrow('single: no model.safetensors and no model.safetensors.index.json');
    expect(isModelFolderPath(join(dir, 'tuned.safetensors'))).toBe(true);
    // A GPT-2 file saved with its config.json beside it stays a GPT-2 checkpoint.
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ architectures: ['GPT2LMHeadModel'], n_embd: 768 }));
    expect(isModelFolderPath(join(dir, 'tuned.safetensors'))).toBe(false);
    expect(isModelFolderPath(dir)).toBe(true);
  });
});

describe('model folder problems, one line each', () => {
  const fresh = (name: string, kind: FamilyFolderKind) => writeFamilyFolder(join(TMP, name), kind).dir;
  /** Rewrites model.safetensors with the tensors of `edit` (name → spec or null to drop). */
  const rewrite = (dir: string, edit: (name: string, dtype: string, shape: number[]) => { dtype: 'F32' | 'BF16' | 'I32'; shape: number[] } | null) => {
    const bytes = readFileSync(join(dir, 'model.safetensors'));
    const len = Number(bytes.readBigUInt64LE(0));
    const header = JSON.parse(bytes.subarray(8, 8 + len).toString()) as Record<string, { dtype: string; shape: number[] }>;
    const specs = Object.entries(header)
      .filter(([n]) => n !== '__metadata__')
      .map(([name, v]) => ({ name, ...(edit(name, v.dtype, v.shape) ?? { dtype: 'drop' as const, shape: [] }) }))
      .filter((s) => s.dtype !== ('drop' as string)) as { name: string; dtype: 'F32' | 'BF16' | 'I32'; shape: number[] }[];
    const head = safetensorsHeader(specs);
    const size = specs.reduce((n, s) => n + s.shape.reduce((a, b) => a * b, 1) * (s.dtype === 'BF16' ? 2 : 4), 0);
    writeFileSync(join(dir, 'model.safetensors'), Buffer.concat([head, Buffer.alloc(size)]));
  };

  it('a missing tensor', async () => {
    const dir = fresh('missing', 'qwen3');
    rewrite(dir, (name, dtype, shape) => (name.includes('layers.1.self_attn.k_norm') ? null : { dtype: dtype as 'BF16', shape }));
    await expect(openModelFolderPath(dir)).rejects.toThrow(
      /^model\.safetensors: missing tensor model\.layers\.1\.self_attn\.k_norm\.weight \(Qwen3ForCausalLM\)$/,
    );
  });

  it('a wrong shape', async () => {
    const dir = fresh('shape', 'qwen3');
    rewrite(dir, (name, dtype, shape) => ({ dtype: dtype as 'BF16', shape: name === 'model.norm.weight' ? [15] : shape }));
    await expect(openModelFolderPath(dir)).rejects.toThrow('model.safetensors: tensor model.norm.weight has shape [15], config.json makes it [16]');
  });

  it('a dtype not allowed', async () => {
    const dir = fresh('dtype', 'qwen3');
    rewrite(dir, (name, dtype, shape) => ({ dtype: name === 'model.norm.weight' ? 'I32' : (dtype as 'BF16'), shape }));
    await expect(openModelFolderPath(dir)).rejects.toThrow('model.safetensors: tensor model.norm.weight is I32; weights must be BF16, F16, F32');
  });

  it('an index naming a missing shard', async () => {
    const dir = fresh('shard', 'llama');
    unlinkSync(join(dir, 'model-00002-of-00002.safetensors'));
    await expect(openModelFolderPath(dir)).rejects.toThrow(
      'model.safetensors.index.json: weight_map names shard model-00002-of-00002.safetensors, not in the folder',
    );
  });

  it('a truncated shard, found from its header alone', async () => {
    const dir = fresh('truncated', 'llama');
    const path = join(dir, 'model-00001-of-00002.safetensors');
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 10));
    await expect(openModelFolderPath(dir)).rejects.toThrow(
      /^model-00001-of-00002\.safetensors: safetensors: truncated file: tensor .* needs bytes \d+\.\.\d+, but the file has \d+ bytes$/,
    );
  });

  it('a tensor another family has', async () => {
    const dir = fresh('extra', 'qwen3');
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ ...config, architectures: ['LlamaForCausalLM'] }));
    await expect(openModelFolderPath(dir)).rejects.toThrow(
      'model.safetensors: tensor model.layers.0.self_attn.k_norm.weight is not a parameter of LlamaForCausalLM as config.json describes it',
    );
  });

  it('config.json: every problem in one line; an unknown rope_scaling named; another architecture named', () => {
    const base = {
      architectures: ['LlamaForCausalLM'],
      vocab_size: 10,
      hidden_size: 16,
      intermediate_size: 8,
      num_hidden_layers: 1,
      num_attention_heads: 4,
      max_position_embeddings: 8,
    };
    expect(parseFamilyConfig(base).headDim).toBe(4);
    expect(parseFamilyConfig(base).nKvHead).toBe(4);
    const biased = parseFamilyConfig({ ...base, attention_bias: true });
    expect([biased.qkvBias, biased.oBias]).toEqual([true, true]); // transformers' Llama: q, k, v and o biases
    expect(
      familyParameters(biased)
        .filter((p) => p.name.endsWith('.bias'))
        .map((p) => p.name),
    ).toEqual([
      'model.layers.0.self_attn.q_proj.bias',
      'model.layers.0.self_attn.k_proj.bias',
      'model.layers.0.self_attn.v_proj.bias',
      'model.layers.0.self_attn.o_proj.bias',
    ]);
    expect(() => parseFamilyConfig({ ...base, num_key_value_heads: 3, head_dim: 256, hidden_act: 'gelu' })).toThrow(
      'config.json: hidden_act "gelu" is not silu (the family\'s SwiGLU); num_attention_heads (4) is not a multiple of num_key_value_heads (3); head_dim (256) is above 128, the largest the attention kernels take',
    );
    expect(() => parseFamilyConfig({ ...base, rope_scaling: { rope_type: 'yarn', factor: 4 } })).toThrow(
      'config.json: rope_scaling type "yarn" is not supported (none, linear, llama3)',
    );
    expect(() => parseFamilyConfig({ ...base, vocab_size: 0, rope_scaling: { type: 'dynamic', factor: 2 } })).toThrow(
      'config.json: vocab_size must be a positive integer, got 0; rope_scaling type "dynamic" is not supported (none, linear, llama3)',
    );
    expect(() => parseFamilyConfig({ ...base, architectures: ['MistralForCausalLM'] })).toThrow(
      'config.json: architectures ["MistralForCausalLM"] is not one of LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM',
    );
    expect(parseFamilyConfig({ ...base, rope_scaling: { type: 'llama3', factor: 8 } }).ropeScaling).toEqual({
      type: 'llama3',
      factor: 8,
      lowFreqFactor: 1,
      highFreqFactor: 4,
      originalMaxPositionEmbeddings: 8192,
    });
  });
});
