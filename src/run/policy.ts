// The on-policy player: a lane's own model decoding with its KV cache (src/gpu/generate.ts), as it is
// at that step (the decoder reads the trainer's weight buffer, which AdamW updates in place). The
// decoder is wrapped only to report each token as it is fed back, with the log-probability the
// policy records for it (the same logSoftmax of the same logits), so a page can watch an action
// being written; without a sink the numbers are those of the plain model policy.

import { gpuLanguageModel } from '../gpu/generate';
import type { GpuModel } from '../gpu/model';
import { createModelPolicy, logSoftmax, type IncrementalDecoder, type LanguageModel, type SamplingOptions } from '../harness/policies/model';
import type { Player, TokenRelay } from './play';

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

/** `model` sampling as `sampling` says (RL: temperature 1 over the full vocabulary, so the recorded logprobs are the sampling distribution's, as the PPO ratio needs; evaluations greedily). */
export function modelPlayer(model: GpuModel, sampling: SamplingOptions): Player {
  const relay: TokenRelay = { sink: null };
  const policy = createModelPolicy(streamingLanguageModel(gpuLanguageModel(model), relay), { ...sampling, reuse: 'prefix' });
  return { policy, relay };
}
