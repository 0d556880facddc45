import { Template } from '@huggingface/jinja';
import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { describe, expect, it } from 'vitest';
import { CHATML_TEMPLATE, LLAMA_TEMPLATE, tinyTokenizerJson } from '../testing/familyFolders';
import type { EventJson, RolloutJson } from './format';
import { importAgentSessionText } from './importers/agentSession';
import { importChatText } from './importers/chat';
import { readFixture } from './importers/testing';
import { registerTokenizer, tokenizerMismatch } from './tokenizer';
import { type ChatMessage, createHfTokenizer, materializeEvent } from './tokenizer-hf';
import { validateRollout } from './validate';

const { json: chatmlJson } = tinyTokenizerJson([
  { content: '<|endoftext|>', special: true },
  { content: '<|im_start|>', special: true },
  { content: '<|im_end|>', special: true },
  { content: '<tool_call>', special: false },
  { content: '</tool_call>', special: false },
  { content: '<tool_response>', special: false },
  { content: '</tool_response>', special: false },
]);
const config = { chat_template: CHATML_TEMPLATE, eos_token: '<|im_end|>', bos_token: null };
const tk = createHfTokenizer({ name: 'tiny-qwen', tokenizer: chatmlJson, tokenizerConfig: config, vocab: 320 });

const TRANSCRIPT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'hello world' },
  {
    role: 'assistant',
    content: 'Reading the file.',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path": "a.txt"}' } },
      { id: 'c2', type: 'function', function: { name: 'read', arguments: { path: 'b.txt' } } },
    ],
  },
  { role: 'tool', tool_call_id: 'c1', content: 'hello' },
  { role: 'tool', tool_call_id: 'c2', content: 'world' },
  { role: 'assistant', content: 'hello world' },
];
const TOOLS = [
  { type: 'function', function: { name: 'read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
];

const tokensOf = (events: EventJson[]) => events.flatMap((e) => (e.op === 'append' && e.tokens ? e.tokens : []));

describe('hf: tokenizers (tokenizer.json through @huggingface/tokenizers)', () => {
  it('gives the library ids: merges, byte tokens, added tokens', () => {
    const library = new LibraryTokenizer(chatmlJson, config);
    // 256 byte tokens, then the merges in rank order: hello = 259, Ġworld = 264, Ġthe = 266, user = 270; then the added tokens.
    expect(tk.encode('hello world')).toEqual([259, 264]);
    expect(tk.encode('<|im_start|>user\n')).toEqual([284, 270, 10]); // ids of single bytes are the bytes' values in this vocabulary;
    expect(tk.encode('é the')).toEqual([195, 169, 266]); // é is the bytes c3 a9, each its own token
    for (const text of ['hello world', 'the file, the world!\n\n  x', '<tool_call>\n{"a": 1}</tool_call><|im_end|>', 'naïve 😀']) {
      expect(tk.encode(text)).toEqual(library.encode(text, { add_special_tokens: false }).ids);
      expect(tk.decode(tk.encode(text))).toBe(text);
    }
    expect(tk.name).toBe('hf:tiny-qwen');
    expect(tk.vocab).toBe(320);
  });

  it('labels word pieces as GPT-2 does: leading space kept, bytes of a split character escaped, specials by name', () => {
    expect(tk.label(264)).toBe(' world');
    expect(tk.label(10)).toBe('\\n');
    expect(tk.label(195)).toBe('\\xc3');
    expect(tk.label(284)).toBe('<|im_start|>');
    expect(tk.bytes(284)).toBeNull();
    expect([...tk.bytes(264)!]).toEqual([...new TextEncoder().encode(' world')]);
    expect(tk.label(288)).toBe('<tool_response>'); // an added token that is not special: its text
  });

  it('reads merges written as "a b" strings (older tokenizer.json files) to the same ids', () => {
    const model = chatmlJson.model as { merges: string[][] };
    const older = { ...chatmlJson, model: { ...model, merges: model.merges.map(([a, b]) => `${a} ${b}`) } };
    const t = createHfTokenizer({ name: 'older', tokenizer: older, tokenizerConfig: config });
    expect(t.encode('hello world, the file')).toEqual(tk.encode('hello world, the file'));
    expect(t.encode('hello world')).toEqual([259, 264]);
  });

  it('refuses a vocab_size smaller than the tokenizer', () => {
    expect(() => createHfTokenizer({ name: 'x', tokenizer: chatmlJson, vocab: 100 })).toThrow(
      "tokenizer.json has ids up to 289, but the model's vocab_size is 100",
    );
  });
});

describe('chat templates (@huggingface/jinja)', () => {
  for (const [name, template, bos] of [
    ['ChatML', CHATML_TEMPLATE, null],
    ['Llama 3 style', LLAMA_TEMPLATE, '<|begin_of_text|>'],
  ] as const) {
    it(`${name}: a transcript with tool calls and results renders exactly as the library renders it, cut at the messages`, () => {
      const { json } = tinyTokenizerJson(
        name === 'ChatML'
          ? [
              { content: '<|endoftext|>', special: true },
              { content: '<|im_start|>', special: true },
              { content: '<|im_end|>', special: true },
            ]
          : ['<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '<|python_tag|>'].map((content) => ({ content, special: true })),
      );
      const t = createHfTokenizer({ name, tokenizer: json, tokenizerConfig: { chat_template: template, bos_token: bos } });
      const expected = new Template(template).render({ messages: TRANSCRIPT, tools: TOOLS, add_generation_prompt: false, ...(bos ? { bos_token: bos } : {}) });
      expect(t.renderChat(TRANSCRIPT, { tools: TOOLS })).toBe(expected);
      const events = t.renderChatEvents(TRANSCRIPT, TOOLS);
      // Every character of the rendering, once, in order; each share tokenized on its own.
      expect(events.map((e) => t.decode((e as { tokens: number[] }).tokens)).join('')).toBe(expected);
      const library = new LibraryTokenizer(json, {});
      for (const e of events) {
        const tokens = (e as { tokens: number[] }).tokens;
        expect(tokens).toEqual(library.encode(library.decode(tokens, { skip_special_tokens: false }), { add_special_tokens: false }).ids);
      }
      const roles = events.map((e) => (e.op === 'append' ? e.role : 'edit'));
      expect(roles).toEqual(['prompt', 'prompt', 'prompt', 'act', 'obs', 'obs', 'prompt', 'act']);
      const text = (i: number) => t.decode((events[i] as { tokens: number[] }).tokens);
      if (name === 'ChatML') {
        expect(text(2)).toBe('<|im_start|>assistant\n'); // the header: not a target
        expect(text(3)).toBe(
          'Reading the file.\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n{"name": "read", "arguments": {"path": "b.txt"}}\n</tool_call><|im_end|>\n',
        );
        // Two tool results share one user turn: the first one's share stops where the second's block begins.
        expect(text(4)).toBe('<|im_start|>user\n<tool_response>\nhello\n</tool_response>');
        expect(text(5)).toBe('\n<tool_response>\nworld\n</tool_response><|im_end|>\n');
        expect(text(7)).toBe('hello world<|im_end|>\n');
      } else {
        expect(text(0).startsWith('<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nTools (JSON schemas):\n{')).toBe(true);
        expect(text(2)).toBe('<|start_header_id|>assistant<|end_header_id|>\n\n');
        expect(text(3)).toBe(
          'Reading the file.\n<|python_tag|>{"name": "read", "parameters": {"path": "a.txt"}}<|python_tag|>{"name": "read", "parameters": {"path": "b.txt"}}<|eot_id|>',
        );
        expect(text(4)).toBe('<|start_header_id|>ipython<|end_header_id|>\n\nhello<|eot_id|>');
      }
    });
  }

  it('a template that refuses a conversation cut short still renders the whole, each message its share', () => {
    const strict = `{% if messages[-1].role == 'system' %}{{ raise_exception('No user query found in messages.') }}{% endif %}${CHATML_TEMPLATE}`;
    const t = createHfTokenizer({ name: 'strict', tokenizer: chatmlJson, tokenizerConfig: { chat_template: strict } });
    const events = t.renderChatEvents(TRANSCRIPT.slice(0, 2));
    expect(events.map((e) => t.decode((e as { tokens: number[] }).tokens))).toEqual([
      '<|im_start|>system\nBe brief.',
      '<|im_end|>\n<|im_start|>user\nhello world<|im_end|>\n',
    ]);
  });

  it('mw import of a chat line with the model folder: token ids, hf: name, targets only the assistant turns', () => {
    registerTokenizer(tk);
    const line = JSON.stringify({ messages: TRANSCRIPT, tools: TOOLS });
    const { rollouts } = importChatText(line, { tokenizer: tk.name });
    const json = rollouts[0];
    expect(json.tokenizer).toBe('hf:tiny-qwen');
    expect(json.vocab).toBe(320);
    expect(json.events.every((e) => e.op === 'append' && e.tokens && e.text === undefined)).toBe(true);
    const rollout = validateRollout(json, { file: 'chat.jsonl' });
    expect(tk.decode(rollout.tokens)).toBe(tk.renderChat(TRANSCRIPT, { tools: TOOLS }));
    const targetText = tk.decode(Array.from(rollout.targets, (i) => rollout.tokens[i]));
    expect(targetText).toBe(`${tk.decode(tokensOf(json.events.slice(3, 4)))}hello world<|im_end|>\n`);
  });
});

describe('text pieces with an hf: tokenizer (agent sessions)', () => {
  it('each piece wrapped as the template wraps a message of its role; written as token ids, same ids, same targets', () => {
    registerTokenizer(tk);
    expect(tk.decode(tk.encodePiece('hello', 'act'))).toBe('<|im_start|>assistant\nhello<|im_end|>\n');
    expect(tk.decode(tk.marker('act'))).toBe('<|im_start|>assistant\n');
    expect(tk.decode(tk.encodePiece('ok', 'obs'))).toBe('<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n');
    const { rollout: text } = importAgentSessionText(readFixture('agent-session-two-compactions.jsonl'), { tokenizer: tk.name });
    expect(text.tokenizer).toBe('hf:tiny-qwen');
    const asText = validateRollout(text, { file: 'session.jsonl' });
    const asTokens: RolloutJson = { ...text, events: text.events.flatMap((e) => materializeEvent(e, tk)) };
    expect(JSON.stringify(asTokens.events)).not.toContain('"text"');
    const read = validateRollout(JSON.parse(JSON.stringify(asTokens)), { file: 'session.jsonl' });
    expect(read.K).toBe(asText.K);
    expect(read.K).toBeGreaterThan(0);
    expect([...read.tokens]).toEqual([...asText.tokens]);
    expect([...read.targets]).toEqual([...asText.targets]);
    expect([...read.segments]).toEqual([...asText.segments]);
  });
});

describe('hf: rollouts read without their tokenizer', () => {
  it('token ids validate under a name nobody registered; text under it is refused in one line', () => {
    const header = { format: 'memorywalker.rollout/v1', id: 'r', vocab: 320, tokenizer: 'hf:never-loaded' };
    const read = validateRollout(
      {
        ...header,
        events: [
          { op: 'append', role: 'prompt', tokens: [284, 270] },
          { op: 'append', role: 'act', tokens: [259, 285] },
        ],
      },
      { file: 'r.json' },
    );
    expect([...read.targets]).toEqual([2, 3]);
    expect(() => validateRollout({ ...header, events: [{ op: 'append', role: 'act', text: 'hello' }] }, { file: 'r.json' })).toThrow(
      'text needs a known tokenizer; "hf:never-loaded" is not one',
    );
  });
});

describe('a model reads only its own tokenizer', () => {
  it('refuses another tokenizer in one line, reads its own and unnamed token rollouts', () => {
    expect(tokenizerMismatch('hf:tiny-qwen', 320, 'hf:tiny-qwen')).toBeNull();
    expect(tokenizerMismatch('custom', 320, 'hf:tiny-qwen')).toBeNull();
    expect(tokenizerMismatch('byte', 320, 'hf:tiny-qwen')?.reason).toBe(
      "is tokenized with byte (vocabulary 272), but the model's vocabulary of 320 is the hf:tiny-qwen tokenizer's",
    );
    expect(tokenizerMismatch('hf:other', 320, 'hf:tiny-qwen')?.reason).toBe(
      "is tokenized with hf:other, but the model's vocabulary of 320 is the hf:tiny-qwen tokenizer's",
    );
    expect(tokenizerMismatch('hf:tiny-qwen', 272)?.reason).toBe("is tokenized with hf:tiny-qwen, but the model's vocabulary of 272 is the byte tokenizer's");
  });
});
