// Model folders of the Llama / Qwen family in the CLI, without a GPU: `mw import --tokenizer MODEL-FOLDER`
// (chats rendered by the folder's chat template, agent sessions wrapped per role, token ids written),
// the model a `--ckpt FOLDER` names (config, tensors, tokenizer), the rollouts it takes, and mw train's refusal.

import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from '@huggingface/jinja';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../rollout/parse';
import { fixturePath } from '../rollout/importers/testing';
import { writeFamilyFolder } from '../testing/familyFolders';
import { UsageError } from './command';
import { importCommand } from './import';
import { checkModelTakes, familyModelArg } from './model-args';
import { parseCommandArgs } from './shared';
import { WORKED, mw, tmpDir } from './subprocess.testing';

const dir = tmpDir('family-model');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const qwen3 = writeFamilyFolder(join(dir, 'qwen3'), 'qwen3', 2);
const llama = writeFamilyFolder(join(dir, 'llama'), 'llama', 2);

async function mwImport(argv: string[]) {
  let err = '';
  const code = await importCommand.run(parseCommandArgs(importCommand, argv), {
    out: () => {},
    err: (t) => {
      err += t;
    },
  });
  return { code, err };
}

const MESSAGES = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'hello world' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path": "the file"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'hello' },
  { role: 'assistant', content: 'hello world' },
];
const TOOLS = [{ type: 'function', function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];

describe('mw import --tokenizer MODEL-FOLDER', () => {
  for (const folder of [qwen3, llama]) {
    const name = folder.dir.split('/').pop();
    it(`${name}: a chat is rendered by the folder's chat template, tokenized by its tokenizer.json, written as ids`, async () => {
      const chat = join(dir, `${name}-chat.jsonl`);
      writeFileSync(chat, `${JSON.stringify({ messages: MESSAGES, tools: TOOLS })}\n`);
      const out = join(dir, `${name}-chat.out.jsonl`);
      expect((await mwImport([chat, '--tokenizer', folder.dir, '--out', out])).code).toBe(0);
      const text = readFileSync(out, 'utf8');
      expect(text).not.toContain('"text"');
      const [rollout] = parseRolloutFile(text, out);
      expect(rollout.tokenizer).toBe(`hf:${name}`);
      const model = await familyModelArg(folder.dir);
      const rendered = new Template(folder.chatTemplate).render({
        messages: MESSAGES,
        tools: TOOLS,
        add_generation_prompt: false,
        ...(name === 'llama' ? { bos_token: '<|begin_of_text|>' } : {}),
      });
      expect(model.tokenizer!.decode(rollout.tokens)).toBe(rendered);
      const own = { modelTokenizer: model.tokenizer!.name };
      // Its own model takes it; the byte worked example is refused in one line saying how to import for it.
      expect(() => checkModelTakes(model.config, [rollout], ['logit-tree'], undefined, own)).not.toThrow();
      const worked = parseRolloutFile(readFileSync(WORKED, 'utf8'), WORKED);
      expect(() => checkModelTakes(model.config, worked, ['logit-tree'], undefined, own)).toThrow(
        `${WORKED}: rollout "worked-example" is tokenized with byte (vocabulary 272), but the model's vocabulary of 320 is the hf:${name} tokenizer's (import the log with mw import --tokenizer MODEL-FOLDER)`,
      );
      const other = name === 'qwen3' ? llama : qwen3;
      const otherModel = await familyModelArg(other.dir);
      expect(() => checkModelTakes(otherModel.config, [rollout], ['logit-tree'], undefined, { modelTokenizer: otherModel.tokenizer!.name })).toThrow(
        `is tokenized with hf:${name}, but the model's vocabulary of 320 is the hf:${other.dir.split('/').pop()} tokenizer's`,
      );
      // A folder without tokenizer.json reads the rollouts its vocabulary names (byte here), as a GPT-2 checkpoint does.
      expect(() => checkModelTakes(model.config, worked, ['logit-tree'])).not.toThrow();
      expect(() => checkModelTakes(model.config, [rollout], ['logit-tree'])).toThrow(
        `is tokenized with hf:${name}, but the model's vocabulary of 320 is the byte tokenizer's`,
      );
    });
  }

  it('an agent session with two compactions: K = 3, token ids only, the targets the byte import has in the same pieces', async () => {
    const out = join(dir, 'session.jsonl');
    const { code, err } = await mwImport([fixturePath('agent-session-two-compactions.jsonl'), '--tokenizer', qwen3.dir, '--out', out]);
    expect(code).toBe(0);
    expect(err).toContain('-> 1 rollout');
    const text = readFileSync(out, 'utf8');
    expect(text).not.toContain('"text"');
    const [rollout] = parseRolloutFile(text, out);
    expect([rollout.tokenizer, rollout.K]).toEqual(['hf:qwen3', 3]);
    const model = await familyModelArg(qwen3.dir);
    // Every target is text the assistant wrote or its end marker, never a role header.
    const targetText = model.tokenizer!.decode(Array.from(rollout.targets, (i) => rollout.tokens[i]));
    expect(targetText).toContain('Read src/math.ts first.<|im_end|>\n');
    expect(targetText).not.toContain('<|im_start|>');
    // What fits follows from max_position_embeddings (RoPE has no table to run out of).
    const own = { modelTokenizer: model.tokenizer!.name };
    expect(() => checkModelTakes(model.config, [rollout], ['logit-tree'], undefined, own)).not.toThrow();
    expect(() => checkModelTakes({ ...model.config, maxPositionEmbeddings: 64 }, [rollout], ['logit-tree'], undefined, own)).toThrow(
      /rollout "3f6c2a1e-8d4b-4c1a-9e2f-5b7d0a9c4e11": logit-tree needs \d+ positions, the model has 64$/,
    );
  });

  it('a path that is neither a tokenizer name nor a folder is a usage error; a folder without tokenizer.json one line', async () => {
    await expect(mwImport([WORKED, '--tokenizer', join(dir, 'nope'), '--out', join(dir, 'x.jsonl')])).rejects.toThrow(UsageError);
    const empty = join(dir, 'empty');
    writeFamilyFolder(empty, 'qwen2');
    rmSync(join(empty, 'tokenizer.json'));
    await expect(mwImport([fixturePath('agent-session-two-compactions.jsonl'), '--tokenizer', empty, '--out', join(dir, 'x.jsonl')])).rejects.toThrow(
      `${empty}: no tokenizer.json (a model folder as the Hub publishes it)`,
    );
  });
});

describe('--ckpt MODEL-FOLDER', () => {
  it('opens config, tensor source and tokenizer; a broken folder is one line naming its file', async () => {
    const model = await familyModelArg(llama.dir);
    expect(model.config.architecture).toBe('LlamaForCausalLM');
    expect(model.folder.weightFiles).toHaveLength(2);
    expect(model.source.totalBytes).toBe([...llama.tensors.values()].reduce((n, t) => n + 4 * t.length, 0));
    expect(model.tokenizer!.name).toBe('hf:llama');
    expect(model.description).toBe(`${llama.dir} (LlamaForCausalLM llama: V 320, C 16, 2 layers, 4 heads (2 kv) of 4, FF 24, P 4096, 55.3 KiB)`);
    const broken = join(dir, 'broken');
    writeFamilyFolder(broken, 'qwen3');
    writeFileSync(
      join(broken, 'config.json'),
      JSON.stringify({ ...JSON.parse(readFileSync(join(qwen3.dir, 'config.json'), 'utf8')), rope_scaling: { rope_type: 'yarn', factor: 4 } }),
    );
    await expect(familyModelArg(broken)).rejects.toThrow(`${broken}/config.json: rope_scaling type "yarn" is not supported (none, linear, llama3)`);
  });

  it('mw train refuses a model folder in one line (exit 2)', async () => {
    const run = await mw([
      'train',
      '--method',
      'logit-tree',
      '--objective',
      'sft',
      '--data',
      WORKED,
      '--steps',
      '1',
      '--ckpt-in',
      qwen3.dir,
      '--ckpt-out',
      join(dir, 'out.safetensors'),
      '--metrics',
      join(dir, 'm.jsonl'),
    ]);
    expect(run).toEqual({ code: 2, stdout: '', stderr: `${qwen3.dir}: training supports GPT-2 checkpoints only; this is a Qwen3ForCausalLM model folder\n` });
  });
});
