// Long chat conversations and the prefix rule computed by its definition (every prefix rendered by
// @huggingface/jinja): the oracle src/rollout/chat-shares.test.ts and bench/chat-render.ts hold chatShares to.

import { Template } from '@huggingface/jinja';
import type { EventJson } from '../rollout/format';
import type { ChatMessage } from '../rollout/tokenizer-hf';
import { createRng } from '../util/prng';

/** Reasoning shown only after the last user query (as Qwen3's template does): a turn's text depends on messages far after it. */
export const LAST_QUERY_TEMPLATE = [
  '{% set ns = namespace(last=-1) %}',
  "{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}{% endif %}{% endfor %}",
  '{% for m in messages %}',
  "{% if m.role == 'assistant' %}<|im_start|>assistant\n",
  '{% if loop.index0 > ns.last %}<think>\n{{ m.reasoning }}\n</think>\n\n{% endif %}',
  '{{ m.content }}<|im_end|>\n',
  '{% else %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endif %}',
  '{% endfor %}',
  '{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}',
].join('');

/**
 * Reasoning (`reasoning_content`) inside `<think>` only for assistant turns after the last user query
 * (a user message that is not a tool result), and there only when the turn has reasoning or is the
 * last message; tool calls as `<tool_call>` blocks; consecutive tool results in one user turn; a
 * conversation without a user query refused. Written for the tests after the rule of Qwen3's template.
 */
export const THINK_TEMPLATE = [
  '{% set ns = namespace(query=-1) %}',
  "{% for m in messages %}{% if m.role == 'user' %}{% set ns.query = loop.index0 %}{% endif %}{% endfor %}",
  "{% if ns.query < 0 %}{{ raise_exception('No user query found in messages.') }}{% endif %}",
  '{% for m in messages %}',
  "{% if m.role == 'system' or m.role == 'user' %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n",
  "{% elif m.role == 'assistant' %}<|im_start|>assistant\n",
  "{% if loop.index0 > ns.query and (loop.last or m.reasoning_content) %}<think>\n{{ m.reasoning_content or '' }}\n</think>\n\n{% endif %}",
  '{{ m.content or "" }}',
  '{% for c in m.tool_calls or [] %}{{ "\\n" }}<tool_call>\n{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}\n</tool_call>{% endfor %}',
  '<|im_end|>\n',
  "{% elif m.role == 'tool' %}",
  "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<|im_start|>user{% endif %}",
  '{{ "\\n" }}<tool_response>\n{{ m.content }}\n</tool_response>',
  "{% if loop.last or messages[loop.index0 + 1].role != 'tool' %}<|im_end|>\n{% endif %}",
  '{% endif %}',
  '{% endfor %}',
  '{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}',
].join('');

/** A system turn, then user turns each answered by assistant turns, some calling tools (results in runs of one to three). */
export function conversation(n: number, seed: number): ChatMessage[] {
  const rng = createRng(seed);
  const words = ['hello', 'world', 'the', 'file', 'user', 'is', 'in', 'naïve', '😀', 'x'];
  const text = () => Array.from({ length: 1 + Math.floor(rng.next() * 6) }, () => words[Math.floor(rng.next() * words.length)]).join(' ');
  const out: ChatMessage[] = [{ role: 'system', content: `Be brief. ${text()}` }];
  while (out.length < n) {
    out.push({ role: 'user', content: text() });
    const calls = Math.floor(rng.next() * 3);
    for (let c = 0; c < calls && out.length < n; c++) {
      const results = 1 + Math.floor(rng.next() * 3);
      const tool_calls = Array.from({ length: results }, (_, k) => ({
        id: `c${k}`,
        type: 'function',
        function: { name: 'read', arguments: { path: text() } },
      }));
      out.push({ role: 'assistant', content: rng.next() < 0.5 ? text() : '', reasoning: text(), tool_calls });
      for (let k = 0; k < results; k++) out.push({ role: 'tool', tool_call_id: `c${k}`, content: text() });
    }
    out.push({ role: 'assistant', content: text(), reasoning: text() });
  }
  return out.slice(0, n);
}

/** The prefix rule by definition, every prefix rendered by the library: the oracle. */
export function prefixRuleEvents(template: string, messages: ChatMessage[], encode: (text: string) => number[], bos: string | null): EventJson[] {
  const t = new Template(template);
  const render = (m: ChatMessage[], gen = false) => t.render({ messages: m, add_generation_prompt: gen, ...(bos ? { bos_token: bos } : {}) });
  const full = render(messages);
  const common = (a: string) => {
    let i = 0;
    while (i < a.length && i < full.length && a[i] === full[i]) i++;
    return i;
  };
  const events: EventJson[] = [];
  const append = (role: 'prompt' | 'act' | 'obs', text: string) => {
    const tokens = encode(text);
    if (tokens.length) events.push({ op: 'append', role, tokens });
  };
  let at = 0;
  messages.forEach((message, i) => {
    const end = Math.max(at, i + 1 === messages.length ? full.length : common(render(messages.slice(0, i + 1))));
    if (message.role === 'assistant') {
      const header = Math.min(end, Math.max(at, common(render(messages.slice(0, i), true))));
      append('prompt', full.slice(at, header));
      append('act', full.slice(header, end));
    } else append(message.role === 'tool' ? 'obs' : 'prompt', full.slice(at, end));
    at = end;
  });
  return events;
}
