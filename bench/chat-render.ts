// A chat of 1,000 messages (system, user turns, assistant turns calling tools, runs of tool results)
// rendered and cut into its messages' shares with the tiny ChatML template: chatShares' windows against
// the prefix rule by its definition (every prefix rendered by @huggingface/jinja, what renderChatEvents
// did before: quadratic). The same events, token for token, or exit 1; the time of each and their ratio.
// Run: npm run bench -- chat-render
import { conversation, prefixRuleEvents } from '../src/testing/chatShares';
import { CHATML_TEMPLATE, tinyTokenizerJson } from '../src/testing/familyFolders';
import { createHfTokenizer } from '../src/rollout/tokenizer-hf';

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
process.exit(failed ? 1 : 0);
