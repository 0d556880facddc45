// The gpt2 tokenizer in a Web Worker, as the app's parse worker would run it: text in, token ids out.
import { gpt2Tokenizer } from '../../src/rollout/gpt2';

self.onmessage = (event: MessageEvent<{ text: string }>) => {
  self.postMessage({ tokens: gpt2Tokenizer.encode(event.data.text) });
};
