// A uniform token sampler: the untrained baseline and the harness's fuzzer. Each token is a stop
// token with probability `stopRate` (`\n` or EOS, equally) and otherwise uniform over `alphabet`;
// its logprob is exactly the log of that probability.

import { BYTE_VOCAB, byteTokenizer } from '../../rollout/tokenizer';
import { createRng } from '../../util/prng';
import { STOP_TOKENS, type Policy } from '../policy';

export interface RandomPolicyOptions {
  /** Token values to draw from (no stop tokens). Default: lowercase letters, space, `>`, `-`, `.`. */
  alphabet?: readonly number[];
  /** Probability that a token is a stop token (default 0.1). */
  stopRate?: number;
}

export const RANDOM_ALPHABET: readonly number[] = byteTokenizer.encode('abcdefghijklmnopqrstuvwxyz ->.');

export function createRandomPolicy(options: RandomPolicyOptions = {}): Policy {
  const alphabet = options.alphabet ?? RANDOM_ALPHABET;
  const stopRate = options.stopRate ?? 0.1;
  if (alphabet.length === 0 || alphabet.some((t) => STOP_TOKENS.includes(t) || !Number.isInteger(t) || t < 0 || t >= BYTE_VOCAB)) {
    throw new Error('random policy: the alphabet needs token ids in [0, 272) other than the stop tokens');
  }
  if (!(stopRate > 0 && stopRate <= 1)) throw new Error(`random policy: stopRate must be in (0, 1], got ${stopRate}`);
  const stopLogprob = Math.log(stopRate / STOP_TOKENS.length);
  const tokenLogprob = stopRate === 1 ? -Infinity : Math.log((1 - stopRate) / alphabet.length);
  return {
    name: 'random',
    start(info) {
      const rng = createRng(info.seed);
      return {
        async act({ maxTokens }) {
          const tokens: number[] = [];
          const logprobs: number[] = [];
          while (tokens.length < maxTokens) {
            if (rng.next() < stopRate) {
              tokens.push(STOP_TOKENS[rng.int(STOP_TOKENS.length)]);
              logprobs.push(stopLogprob);
              break;
            }
            tokens.push(alphabet[rng.int(alphabet.length)]);
            logprobs.push(tokenLogprob);
          }
          return { tokens, logprobs };
        },
      };
    },
  };
}
