// A chat's shares found through windows (chatShares) are the prefix rule's, computed here the slow way
// straight from the template library (every prefix rendered by @huggingface/jinja): the same events and
// the same token ids, on long conversations, for templates that look only at a message's neighbours and
// for ones that look further (the last user query), where the windows fall back to the prefix rule. The import
// writes these shares for templates that edit no earlier turn (ChatML, Llama 3); chat-edits.test.ts covers the others.

import { describe, expect, it } from 'vitest';
import { LAST_QUERY_TEMPLATE, conversation, prefixRuleEvents } from '../testing/chatShares';
import { CHATML_TEMPLATE, LLAMA_TEMPLATE, tinyTokenizerJson } from '../testing/familyFolders';
import type { EventJson } from './format';
import { type ChatMessage, chatShares, createHfTokenizer } from './tokenizer-hf';

const CHATML_ADDED = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content) => ({ content, special: true }));
const LLAMA_ADDED = ['<|begin_of_text|>', '<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>', '<|python_tag|>'].map((content) => ({
  content,
  special: true,
}));

const TEMPLATES = [
  ['ChatML', CHATML_TEMPLATE, CHATML_ADDED, null],
  ['Llama 3 style', LLAMA_TEMPLATE, LLAMA_ADDED, '<|begin_of_text|>'],
  ['last user query', LAST_QUERY_TEMPLATE, CHATML_ADDED, null],
] as const;

/** The appends of chatShares' cut (what renderChatEvents writes for a template that edits no earlier turn). */
function sharesEvents(tk: ReturnType<typeof createHfTokenizer>, messages: ChatMessage[]): EventJson[] {
  const full = tk.renderChat(messages);
  const events: EventJson[] = [];
  const append = (role: 'prompt' | 'act' | 'obs', text: string) => {
    const tokens = tk.encode(text);
    if (tokens.length) events.push({ op: 'append', role, tokens });
  };
  chatShares(messages, full, (m, gen) => tk.renderChat(m, { addGenerationPrompt: gen })).forEach(({ start, header, end }, i) => {
    if (messages[i].role === 'assistant') {
      append('prompt', full.slice(start, header));
      append('act', full.slice(header, end));
    } else append(messages[i].role === 'tool' ? 'obs' : 'prompt', full.slice(start, end));
  });
  return events;
}

describe('chat shares through windows', () => {
  for (const [name, template, added, bos] of TEMPLATES) {
    it(`${name}: 150 messages give the prefix rule's events, token for token`, () => {
      const tk = createHfTokenizer({ name, tokenizer: tinyTokenizerJson(added).json, tokenizerConfig: { chat_template: template, bos_token: bos } });
      for (const seed of [1, 2]) {
        const messages = conversation(150, seed);
        const oracle = prefixRuleEvents(template, messages, tk.encode, bos);
        // The import writes them as they are where the template edits no earlier turn; the last user query
        // template hides reasoning once a later query follows: the import records those edits (chat-edits.test.ts).
        if (template !== LAST_QUERY_TEMPLATE) expect(tk.renderChatEvents(messages)).toEqual(oracle);
        else {
          expect(sharesEvents(tk, messages)).toEqual(oracle);
          expect(tk.renderChatEvents(messages).filter((e) => e.op === 'edit').length).toBe(messages.filter((m) => m.role === 'user').length - 1);
        }
      }
    });
  }

  // A template whose turns depend on far messages (the last user query) falls back to the prefix rule where
  // the prefix rule lets a share run over several messages: still exact (the 150-message case), not O(n).
  for (const [name, template, added, bos] of TEMPLATES.slice(0, 2)) {
    it(`${name}: 1,000 messages in O(n) renders of a few messages each (the prefix rule renders n prefixes of up to n)`, () => {
      const tk = createHfTokenizer({ name, tokenizer: tinyTokenizerJson(added).json, tokenizerConfig: { chat_template: template, bos_token: bos } });
      const messages = conversation(1000, 3);
      const full = tk.renderChat(messages);
      let rendered = 0;
      const shares = chatShares(messages, full, (m, gen) => {
        rendered += m.length;
        return tk.renderChat(m, { addGenerationPrompt: gen });
      });
      // Every character once, in order.
      expect(shares.map((s) => full.slice(s.start, s.end)).join('')).toBe(full);
      expect(rendered).toBeLessThan(40 * messages.length);
      console.log(`${name}, 1,000 messages: ${rendered.toLocaleString('en')} messages rendered (the prefix rule: about 750,000)`);
    });
  }

  it("ChatML, 400 messages: the prefix rule's ids; time (generous bound: bench/chat-render.ts measures 1,000)", () => {
    const [, template, added] = TEMPLATES[0];
    const tk = createHfTokenizer({ name: 'chatml', tokenizer: tinyTokenizerJson(added).json, tokenizerConfig: { chat_template: template } });
    const messages = conversation(400, 3);
    const started = performance.now();
    const events = tk.renderChatEvents(messages);
    const ms = performance.now() - started;
    expect(events).toEqual(prefixRuleEvents(template, messages, tk.encode, null));
    expect(ms).toBeLessThan(10_000); // the shared test machine: only a gross regression fails this
  });
});
