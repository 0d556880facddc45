// A chat of 1,000 messages (system, user turns, assistant turns calling tools, runs of tool results)
// rendered and cut into its messages' shares with the tiny ChatML template: chatShares' windows against
// the prefix rule by its definition (every prefix rendered by @huggingface/jinja, what renderChatEvents
// did before: quadratic). The same events, token for token, or exit 1; the time of each and their ratio.
// Then a template that edits earlier turns (reasoning shown only after the last user query, as Qwen3's):
// an agent chat of three user queries and long tool work, its edits found through windows against the
// same events by the definition (every prefix rendered).
// Run: npm run bench -- chat-render
import { conversation, prefixRuleEvents, THINK_TEMPLATE } from '../src/testing/chatShares';
import { CHATML_TEMPLATE, tinyTokenizerJson } from '../src/testing/familyFolders';
import { type ChatMessage, chatTapeEvents, createHfTokenizer } from '../src/rollout/tokenizer-hf';

const added = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'].map((content) => ({ content, special: true }));
const tk = createHfTokenizer({ name: 'chatml', tokenizer: tinyTokenizerJson(added).json, tokenizerConfig: { chat_template: CHATML_TEMPLATE } });
let failed = false;
for (const n of [200, 1000]) {
  const messages = conversation(n, 3);
  tk.renderChatEvents(messages.slice(0, 20)); // warm-up
  let t = performance.now();
  const events = tk.renderChatEvents(messages);
  const windows = performance.now() - t;
  t = performance.now();
  const oracle = prefixRuleEvents(CHATML_TEMPLATE, messages, tk.encode, null);
  const prefixes = performance.now() - t;
  const same = JSON.stringify(events) === JSON.stringify(oracle);
  if (!same) failed = true;
  const tokens = events.reduce((s, e) => s + (e.op === 'append' ? (e.tokens?.length ?? 0) : 0), 0);
  console.log(
    `${n} messages, ${tokens} tokens: windows ${windows.toFixed(0)} ms, every prefix ${prefixes.toFixed(0)} ms (${(prefixes / windows).toFixed(1)}×); ids ${same ? 'equal' : 'DIFFER'}`,
  );
}

const think = createHfTokenizer({ name: 'think', tokenizer: tinyTokenizerJson(added).json, tokenizerConfig: { chat_template: THINK_TEMPLATE } });
/** n messages: three user queries, each answered after a run of tool calls, every turn reasoning. */
function agentChat(n: number): ChatMessage[] {
  const out: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }];
  const steps = Math.floor((n - 8) / 6);
  for (let q = 0; q < 3; q++) {
    out.push({ role: 'user', content: `query ${q}` });
    for (let s = 0; s < steps; s++) {
      out.push({
        role: 'assistant',
        reasoning_content: `step ${s}`,
        content: '',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'read', arguments: { n: s } } }],
      });
      out.push({ role: 'tool', tool_call_id: 'c', content: `file ${s}` });
    }
    out.push({ role: 'assistant', reasoning_content: 'done', content: `answer ${q}` });
  }
  while (out.length < n) out.push({ role: 'assistant', reasoning_content: 'wait', content: 'Anything else?' });
  return out;
}
for (const n of [200, 1000]) {
  const messages = agentChat(n);
  let t = performance.now();
  const events = think.renderChatEvents(messages);
  const windows = performance.now() - t;
  t = performance.now();
  const render = (m: readonly ChatMessage[], gen: boolean) => think.renderChat(m, { addGenerationPrompt: gen });
  const oracle = chatTapeEvents(messages, think.renderChat(messages), render, think, { exact: true });
  const prefixes = performance.now() - t;
  const same = JSON.stringify(events) === JSON.stringify(oracle);
  if (!same) failed = true;
  const edits = events.filter((e) => e.op === 'edit').length;
  console.log(
    `template edits, ${n} messages, ${edits} edits: windows ${windows.toFixed(0)} ms, every prefix ${prefixes.toFixed(0)} ms (${(prefixes / windows).toFixed(1)}×); ids ${same ? 'equal' : 'DIFFER'}`,
  );
}
process.exit(failed ? 1 : 0);
