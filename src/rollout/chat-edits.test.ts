// A chat template that writes an earlier turn differently once a later user message follows (reasoning
// shown only after the last user query, as Qwen3's does): the import records the template's edits, so
// every assistant turn (its reasoning too) is a target under exactly the context it was generated in.

import { describe, expect, it } from 'vitest';
import { ROLLOUT_FORMAT, type EventJson } from './format';
import { validateRollout } from './validate';
import { deriveTree } from '../tree';
import { LAST_QUERY_TEMPLATE, THINK_TEMPLATE, conversation } from '../testing/chatShares';
import { CHATML_TEMPLATE, tinyTokenizerJson } from '../testing/familyFolders';
import { type ChatMessage, chatTapeEvents, createHfTokenizer } from './tokenizer-hf';

const ADDED = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content) => ({ content, special: true }));
const tokenizerOf = (template: string) =>
  createHfTokenizer({ name: 'think', tokenizer: tinyTokenizerJson(ADDED).json, tokenizerConfig: { chat_template: template, eos_token: '<|im_end|>' } });

const call = (name: string, args: Record<string, unknown>) => ({ id: name, type: 'function', function: { name, arguments: args } });

/** Three user turns; the second answered after a tool call and two results; every assistant turn reasons. */
const CHAT: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is in a.txt?' },
  { role: 'assistant', reasoning_content: 'I cannot see it yet.', content: 'Shall I read it?' },
  { role: 'user', content: 'Yes, and b.txt too.' },
  { role: 'assistant', reasoning_content: 'Two reads.', content: '', tool_calls: [call('read', { path: 'a.txt' }), call('read', { path: 'b.txt' })] },
  { role: 'tool', tool_call_id: 'read', content: 'alpha' },
  { role: 'tool', tool_call_id: 'read', content: 'beta' },
  { role: 'assistant', reasoning_content: 'Both read.', content: 'a.txt says alpha, b.txt says beta.' },
  { role: 'user', content: 'Thanks.' },
  { role: 'assistant', reasoning_content: 'Done.', content: 'You are welcome.' },
];

const decodeAll = (tk: ReturnType<typeof tokenizerOf>, events: EventJson[]) =>
  events.map((e) => (e.op === 'append' ? { op: 'append', role: e.role, text: tk.decode(e.tokens!) } : { op: 'edit', view: e.view }));

describe('chat import under a template that edits earlier turns (reasoning after the last user query)', () => {
  const tk = tokenizerOf(THINK_TEMPLATE);
  const events = tk.renderChatEvents(CHAT);
  const rollout = validateRollout({ format: ROLLOUT_FORMAT, id: 'think', vocab: tk.vocab, tokenizer: tk.name, events }, { file: 'think.jsonl' });
  const tree = deriveTree(rollout);
  const render = (m: ChatMessage[], gen: boolean) => tk.renderChat(m, { addGenerationPrompt: gen });

  it('every assistant turn, its reasoning included, is a target (act), as the template writes it as the last turn', () => {
    const acts = decodeAll(tk, events)
      .filter((e) => e.op === 'append' && e.role === 'act')
      .map((e) => (e as { text: string }).text);
    expect(acts).toEqual([
      '<think>\nI cannot see it yet.\n</think>\n\nShall I read it?<|im_end|>\n',
      '<think>\nTwo reads.\n</think>\n\n\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n{"name": "read", "arguments": {"path": "b.txt"}}\n</tool_call><|im_end|>\n',
      '<think>\nBoth read.\n</think>\n\na.txt says alpha, b.txt says beta.<|im_end|>\n',
      '<think>\nDone.\n</think>\n\nYou are welcome.<|im_end|>\n',
    ]);
    // Each is the template's own text of the turn: the rendering through it less the generation prompt's.
    CHAT.forEach((m, k) => {
      if (m.role !== 'assistant') return;
      const context = render(CHAT.slice(0, k), true);
      expect(acts).toContain(render(CHAT.slice(0, k + 1), false).slice(context.length));
    });
  });

  it('two edits, at the second and third user queries: the tape kept to the turn header, the turns re-rendered without reasoning inserted as prompt', () => {
    const edits = events.flatMap((e, i) => (e.op === 'edit' ? [i] : []));
    expect(edits.length).toBe(2);
    expect(rollout.K).toBe(2);
    expect(tree.K).toBe(2);
    const shown = decodeAll(tk, events);
    // First edit: everything up to the first answer's header kept, its text without the <think> block inserted.
    const [first, second] = edits.map((i) => events[i] as Extract<EventJson, { op: 'edit' }>);
    const headerEnd = render(CHAT.slice(0, 2), true);
    expect(first.view.length).toBe(2);
    const keep0 = (first.view[0] as { keep: [number, number] }).keep;
    expect(keep0[0]).toBe(0);
    expect(tk.decode(Array.from(rollout.tokens.slice(0, keep0[1])))).toBe(headerEnd);
    expect(tk.decode((first.view[1] as { insert: { tokens: number[] } }).insert.tokens)).toBe('Shall I read it?<|im_end|>\n');
    expect((first.view[1] as { insert: { role: string } }).insert.role).toBe('prompt');
    // The user query that caused it is appended after the edit, as prompt.
    expect(shown[edits[0] + 1]).toEqual({ op: 'append', role: 'prompt', text: '<|im_start|>user\nYes, and b.txt too.<|im_end|>\n' });
    // Second edit: the second and third answers lose their reasoning.
    const inserted = tk.decode((second.view.at(-1) as { insert: { tokens: number[] } }).insert.tokens);
    expect(inserted).toBe(
      '\n<tool_call>\n{"name": "read", "arguments": {"path": "a.txt"}}\n</tool_call>\n<tool_call>\n{"name": "read", "arguments": {"path": "b.txt"}}\n</tool_call><|im_end|>\n' +
        '<|im_start|>user\n<tool_response>\nalpha\n</tool_response>\n<tool_response>\nbeta\n</tool_response><|im_end|>\n' +
        '<|im_start|>assistant\na.txt says alpha, b.txt says beta.<|im_end|>\n',
    );
    // After both edits the live tape is the template's rendering of the whole conversation.
    const live = tree.branches[tree.K];
    const ids = live.starts.flatMap((s: number, r: number) => Array.from({ length: live.lengths[r] }, (_, j) => rollout.tokens[s + j]));
    expect(tk.decode(ids)).toBe(tk.renderChat(CHAT));
  });

  it("each target's live prefix decodes to the rendering of the messages before its turn with the generation prompt, then the turn's earlier tokens", () => {
    expect(livePrefixesChecked(tk, CHAT)).toBe(Array.from(tree.targets).length);
    expect(tree.targets.length).toBeGreaterThan(40);
  });

  it("a turn without reasoning: its empty <think> block is shown while it is last, then edited out by the next message, a tool result too (Qwen3's rule)", () => {
    const chat: ChatMessage[] = [
      { role: 'user', content: 'Read a.txt.' },
      { role: 'assistant', content: 'Reading.', tool_calls: [call('read', { path: 'a.txt' })] },
      { role: 'tool', tool_call_id: 'read', content: 'alpha' },
      { role: 'assistant', content: 'It says alpha.' },
      { role: 'user', content: 'Thanks.' },
      { role: 'assistant', content: 'Welcome.' },
    ];
    const plain = tk.renderChatEvents(chat);
    const acts = decodeAll(tk, plain).filter((e) => e.op === 'append' && e.role === 'act');
    expect(acts.map((e) => (e as { text: string }).text.slice(0, 19))).toEqual(Array(3).fill('<think>\n\n</think>\n\n'));
    // An edit where each empty block goes: at the tool result after the first answer, at the user query after the second.
    expect(plain.map((e) => (e.op === 'edit' ? 'edit' : e.role))).toEqual([
      'prompt',
      'prompt',
      'act',
      'edit',
      'obs',
      'prompt',
      'act',
      'edit',
      'prompt',
      'prompt',
      'act',
    ]);
    expect(livePrefixesChecked(tk, chat)).toBeGreaterThan(20);
  });
});

/**
 * Checks, for every target of the conversation's import, that its live prefix (the conditioning tree's)
 * decodes to the template's rendering of the messages before its turn with the generation prompt, then
 * the turn's earlier tokens: what the model saw when it wrote the token. Returns the number of targets checked.
 */
function livePrefixesChecked(tk: ReturnType<typeof tokenizerOf>, chat: ChatMessage[]): number {
  const events = tk.renderChatEvents(chat);
  const rollout = validateRollout({ format: ROLLOUT_FORMAT, id: 'c', vocab: tk.vocab, tokenizer: tk.name, events }, { file: 'c.jsonl' });
  const tree = deriveTree(rollout);
  const turns = chat.flatMap((m, k) => (m.role === 'assistant' ? [k] : []));
  let act = -1;
  let turnStart = -1;
  let previous = -2;
  let checked = 0;
  for (const id of tree.targets) {
    if (id !== previous + 1) {
      act++;
      turnStart = id;
    }
    previous = id;
    const context = tk.renderChat(chat.slice(0, turns[act]), { addGenerationPrompt: true });
    const ownSoFar = tk.decode(Array.from(rollout.tokens.slice(turnStart, id)));
    expect(tk.decode(Array.from(tree.livePrefix(id), (i) => rollout.tokens[i]))).toBe(context + ownSoFar);
    checked++;
  }
  expect(act).toBe(turns.length - 1);
  return checked;
}

describe('template edits: the stretches between edits cut by windows are the definition (every prefix rendered)', () => {
  for (const [name, template] of [
    ['think', THINK_TEMPLATE],
    ['last user query', LAST_QUERY_TEMPLATE],
  ] as const) {
    it(`${name}: 120 messages, the same events as rendering every prefix`, () => {
      const tk = tokenizerOf(template);
      for (const seed of [1, 2]) {
        const messages = conversation(120, seed).map((m) => (m.reasoning ? { ...m, reasoning_content: m.reasoning } : m));
        const render = (m: readonly ChatMessage[], gen: boolean) => tk.renderChat(m, { addGenerationPrompt: gen });
        const exact = chatTapeEvents(messages, tk.renderChat(messages), render, tk, { exact: true });
        expect(exact.some((e) => e.op === 'edit')).toBe(true);
        expect(tk.renderChatEvents(messages)).toEqual(exact);
      }
    });
  }

  it('an edit no window sees (reasoning shown while the chat is under 12 messages): the stretch checks find it, the same events as the definition', () => {
    // Reasoning of every turn until the twelfth message arrives, then of none: a rule on the whole length that windows of a few messages never meet.
    const template = THINK_TEMPLATE.replace('loop.index0 > ns.query and (loop.last or m.reasoning_content)', 'messages | length < 12');
    expect(template).not.toBe(THINK_TEMPLATE);
    const tk = tokenizerOf(template);
    const messages = conversation(40, 5).map((m) => (m.reasoning ? { ...m, reasoning_content: m.reasoning } : m));
    const render = (m: readonly ChatMessage[], gen: boolean) => tk.renderChat(m, { addGenerationPrompt: gen });
    const exact = chatTapeEvents(messages, tk.renderChat(messages), render, tk, { exact: true });
    expect(exact.filter((e) => e.op === 'edit').length).toBe(1);
    expect(tk.renderChatEvents(messages)).toEqual(exact);
  });

  it('200 and 400 messages, three user queries and long tool work between them: renders of O(n) messages in all', () => {
    const tk = tokenizerOf(THINK_TEMPLATE);
    /** n messages: three user queries, each answered after (n − 5) / 6 tool calls, an answer closing the chat. */
    const chat = (n: number) => {
      const messages: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }];
      const steps = Math.floor((n - 8) / 6);
      for (let q = 0; q < 3; q++) {
        messages.push({ role: 'user', content: `query ${q}` });
        for (let s = 0; s < steps; s++) {
          messages.push({ role: 'assistant', reasoning_content: `step ${s}`, content: '', tool_calls: [call('read', { path: `f${s}.txt` })] });
          messages.push({ role: 'tool', tool_call_id: 'read', content: `file ${s}` });
        }
        messages.push({ role: 'assistant', reasoning_content: 'done', content: `answer ${q}` });
      }
      while (messages.length < n) messages.push({ role: 'assistant', reasoning_content: 'wait', content: 'Anything else?' });
      return messages;
    };
    const cost = (messages: ChatMessage[], exact: boolean) => {
      let rendered = 0;
      const render = (m: readonly ChatMessage[], gen: boolean) => {
        rendered += m.length;
        return tk.renderChat(m, { addGenerationPrompt: gen });
      };
      const events = chatTapeEvents(messages, tk.renderChat(messages), render, tk, { exact });
      return { events, rendered };
    };
    const small = cost(chat(200), false);
    const large = cost(chat(400), false);
    const definition = cost(chat(200), true);
    expect(chat(200).length).toBe(200);
    expect(small.events).toEqual(definition.events);
    expect(small.events.filter((e) => e.op === 'edit').length).toBe(2);
    expect(large.events.filter((e) => e.op === 'edit').length).toBe(2);
    // Linear: twice the messages, about twice the rendering (every prefix: four times); a few dozen messages rendered per message.
    expect(large.rendered / small.rendered).toBeLessThan(2.3);
    expect(small.rendered).toBeLessThan(60 * 200);
    expect(definition.rendered).toBeGreaterThan(20_000);
    console.log(
      `messages rendered: 200 messages ${small.rendered.toLocaleString('en')}, 400 messages ${large.rendered.toLocaleString('en')}; every prefix (200): ${definition.rendered.toLocaleString('en')}`,
    );
  });
});

describe('templates that never edit earlier turns keep the prefix rule (no edit)', () => {
  it('ChatML: 150 messages, no edit event', () => {
    const tk = tokenizerOf(CHATML_TEMPLATE);
    expect(tk.renderChatEvents(conversation(150, 1)).every((e) => e.op === 'append')).toBe(true);
  });
});
