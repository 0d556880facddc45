// The on-policy player: a lane's own model decoding with its KV cache (src/gpu/generate.ts), as it is
// at that step (the decoder reads the trainer's weight buffer, which AdamW updates in place). Each
// token fed back goes to the relay with the logprob the policy records for it, so a page can watch
// an action being written; without a sink the numbers are those of the plain model policy.

import { createGpuModelPolicy } from '../gpu/generate';
import type { GpuModel } from '../gpu/model';
import type { SamplingOptions } from '../harness/policies/model';
import type { Player, TokenRelay } from './play';

/** `model` sampling as `sampling` says (RL: temperature 1 over the full vocabulary, so the recorded logprobs are the sampling distribution's, as the PPO ratio needs; evaluations greedily). */
export function modelPlayer(model: GpuModel, sampling: SamplingOptions): Player {
  const relay: TokenRelay = { sink: null };
  const policy = createGpuModelPolicy(model, { ...sampling, reuse: 'prefix', onToken: (token, logprob) => relay.sink?.(token, logprob) });
  return { policy, relay };
}
