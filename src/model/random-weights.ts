// Random weights (mw verify --config P --seed S, tests, benches): GPT-2's init is so small that every
// position looks alike; larger, noisier weights make attention patterns (and masking mistakes) show.

import type { ModelConfig } from './config';
import { initWeights, type ModelWeights } from './params';
import { createRng } from '../util/prng';

export function randomWeights(config: ModelConfig, seed: number, std = 0.15): ModelWeights {
  const weights = initWeights(config, seed);
  const rng = createRng(seed ^ 0x5eed);
  for (const [name, t] of weights.tensors) {
    const isNorm = /ln_\d|ln_f/.test(name);
    const isBias = name.endsWith('.bias');
    for (let i = 0; i < t.length; i++) {
      if (isNorm && !isBias) t[i] = 1 + 0.1 * rng.normal();
      else if (isBias) t[i] = 0.05 * rng.normal();
      else t[i] = std * rng.normal();
    }
  }
  return weights;
}
