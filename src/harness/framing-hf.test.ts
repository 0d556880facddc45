// The harness in a model folder's tokenizer (hfFraming): episodes played by the model policy over a CPU
// stand-in model, under editors that compact, pop and fold, with the tiny ChatML folder's template and
// tokenizer. Each rollout records "hf:<name>", re-derives to the views decoded from (verifyEpisode), ends
// every harness piece with the template's assistant header, and never makes a header or a role marker a target.

import { Template } from '@huggingface/jinja';
import { describe, expect, it } from 'vitest';
import { createHfTokenizer } from '../rollout/tokenizer-hf';
import { CHATML_TEMPLATE, tinyTokenizerJson } from '../testing/familyFolders';
import { createRng } from '../util/prng';
import { generateDataset } from './dataset';
import { BYTE_FRAMING, hfFraming } from './framing';
import { commonPrefix, createModelPolicy, type IncrementalDecoder, type LanguageModel } from './policies/model';
import { verifyEpisode } from './verify';

const added = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content) => ({ content, special: true }));
const { json, ids } = tinyTokenizerJson(added);
const tk = createHfTokenizer({ name: 'tiny-qwen', tokenizer: json, tokenizerConfig: { chat_template: CHATML_TEMPLATE }, vocab: 320 });
const IM_END = ids.get('<|im_end|>')!;
const IM_START = ids.get('<|im_start|>')!;
const framing = hfFraming(tk, [IM_END]);
const template = new Template(CHATML_TEMPLATE);

/** A CPU model of the folder's vocabulary: logits seeded by the prefix, the '\n' token favoured, the end of turn now and then. */
function cpuModel(): LanguageModel {
  const V = 320;
  const logits = (prefix: readonly number[]) => {
    let h = 0x811c9dc5;
    for (const t of prefix) h = Math.imul(h ^ t, 0x01000193) >>> 0;
    const rng = createRng(h ^ prefix.length);
    const out = Float32Array.from({ length: V }, () => rng.normal());
    out[framing.newline] += 4;
    out[IM_END] += 1;
    return out;
  };
  return {
    name: 'cpu-hash',
    vocabSize: V,
    nPositions: 4096,
    createDecoder(): IncrementalDecoder {
      const tokens: number[] = [];
      const extend = async (more: readonly number[]) => {
        tokens.push(...more);
        return logits(tokens);
      };
      return {
        get length() {
          return tokens.length;
        },
        tokens,
        truncate: (n) => void (tokens.length = Math.min(n, tokens.length)),
        extend,
        sync(view) {
          tokens.length = Math.min(commonPrefix(tokens, view), view.length - 1);
          return extend(view.slice(tokens.length));
        },
        destroy() {},
      };
    },
  };
}

describe("the harness in a model folder's tokenizer", () => {
  it("the cue is the template's assistant header; pieces are its messages; a byte-vocabulary model is refused", () => {
    expect(tk.decode(framing.cue)).toBe('<|im_start|>assistant\n');
    expect(tk.decode(framing.prompt('find x'))).toBe(template.render({ messages: [{ role: 'user', content: 'find x' }], add_generation_prompt: true }));
    expect(tk.decode(framing.obs('x is 3'))).toBe('<|im_start|>user\n<tool_response>\nx is 3\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
    expect(tk.decode(framing.summary('so far: x'))).toBe('<|im_start|>user\nso far: x<|im_end|>\n<|im_start|>assistant\n');
    expect(framing.foldSummary([...tk.encode('fold the file'), framing.newline])).toEqual(tk.encode('the file'));
    expect(framing.foldSummary([...tk.encode('hello'), framing.newline])).toBeNull();
    expect(() => createModelPolicy(cpuModel(), { framing: BYTE_FRAMING })).toThrow(
      'model policy: the harness speaks the byte tokenizer (272 tokens), the model has a vocabulary of 320',
    );
  });

  for (const editor of ['compact', 'stack', 'fold'] as const) {
    it(`${editor}: episodes re-derive to the views decoded from; no header or marker is a target`, async () => {
      const policy = createModelPolicy(cpuModel(), { framing });
      const results: Awaited<ReturnType<typeof verifyEpisode>>[] = [];
      const { rollouts } = await generateDataset({ env: 'lookup', editor, budget: 60, n: 3, seed: 5, framing }, policy, {
        onRollout: (result) => results.push(verifyEpisode(result)),
      });
      expect(rollouts.map((r) => [r.tokenizer, r.vocab])).toEqual(Array(3).fill(['hf:tiny-qwen', 320]));
      const turns = rollouts.reduce((s, r) => s + (r.meta as { turns: number }).turns, 0);
      expect(turns).toBeGreaterThan(3);
      if (editor !== 'fold') expect(results.some((r) => r.K > 0)).toBe(true); // the budget made edits
      for (const r of rollouts) {
        for (const e of r.events) {
          const pieces = e.op === 'append' ? [e] : e.view.flatMap((p) => ('insert' in p ? [p.insert] : []));
          for (const p of pieces) {
            const tokens = p.tokens!;
            if (p.role === 'act') expect(tokens).not.toContain(IM_START);
            else expect(tk.decode(tokens).endsWith('<|im_start|>assistant\n'), tk.decode(tokens)).toBe(true);
          }
        }
      }
    });
  }
});
