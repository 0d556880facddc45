// RL's policy: each lane's own model decoding with its KV cache (src/gpu/generate.ts), sampled at
// temperature 1 over the full vocabulary so the recorded logprobs are the sampling distribution's
// (the PPO ratio needs that); evaluations decode greedily. The decoder is wrapped only to report each token as it is fed back,
// with the log-probability the policy records for it (the same logSoftmax of the same logits), so
// the page can watch an action being written.

import { gpuLanguageModel } from '../../../gpu/generate';
import { createModelPolicy, logSoftmax, type IncrementalDecoder, type LanguageModel } from '../../../harness/policies/model';
import type { LanePolicy } from './run';
import type { TokenRelay } from './rollouts';

/** `lm` whose decoders report every token fed back after a sample (all but an action's last). */
export function streamingLanguageModel(lm: LanguageModel, relay: TokenRelay): LanguageModel {
  return {
    name: lm.name,
    vocabSize: lm.vocabSize,
    nPositions: lm.nPositions,
    createDecoder(): IncrementalDecoder {
      const inner = lm.createDecoder();
      /** Logits of the last row computed: the distribution the next fed-back token was drawn from. */
      let last: Float32Array | null = null;
      return {
        get length() {
          return inner.length;
        },
        get tokens() {
          return inner.tokens;
        },
        truncate(n) {
          last = null;
          inner.truncate(n);
        },
        async extend(tokens) {
          if (last && tokens.length === 1 && relay.sink) relay.sink(tokens[0], logSoftmax(last)[tokens[0]]);
          last = await inner.extend(tokens);
          return last;
        },
        async sync(view) {
          last = await inner.sync(view);
          return last;
        },
        destroy() {
          last = null;
          inner.destroy();
        },
      };
    },
  };
}

/** Sampling at temperature 1 for RL; greedy (temperature 0) for evaluations. */
export const laneModelPolicy: LanePolicy = (lane, _env, mode = 'sample') => {
  const relay: TokenRelay = { sink: null };
  const policy = createModelPolicy(streamingLanguageModel(gpuLanguageModel(lane.trainer.model), relay), {
    temperature: mode === 'greedy' ? 0 : 1,
    topK: 0,
    reuse: 'prefix',
  });
  return { policy, relay };
};
