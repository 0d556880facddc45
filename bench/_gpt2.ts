// What bench/gpt2.ts measures, shared by its Node run and its Chromium page (bench/gpt2-page): a
// gpt2-124M-shaped model from a published-layout file, a 1,024-token gpt2 rollout, the scoring of its
// targets (forward, log-softmax gather) timed, and every GPU buffer created counted (live bytes, peak).

import { createGpuModel } from '../src/gpu/model';
import type { Gpu } from '../src/gpu/runtime/device';
import { scoreRollouts } from '../src/gpu/score';
import type { ModelConfig } from '../src/model/config';
import type { ModelWeights } from '../src/model/params';
import { validateRollout } from '../src/rollout/validate';
import type { Rollout } from '../src/rollout/rollout';

/** GPT-2 124M: what Hugging Face's `gpt2` is. */
export const GPT2_124M: ModelConfig = { vocabSize: 50257, nEmbd: 768, nLayer: 12, nHead: 12, nPositions: 1024 };

/** Text to tokenize: English prose, so the tokens are GPT-2's ordinary word pieces. */
export const PROSE =
  'A harness that compresses its context while the policy generates turns a rollout into a tree of ' +
  'conditioning contexts. Every edit forks the history: tokens written before the edit saw the old view, ' +
  'tokens after it see the new one. Training on the flattened sequence scores tokens under contexts the ' +
  'policy never saw, and the drift between the two is what this workbench measures. ';

/** A 1,024-token gpt2 rollout: a 24-token prompt, then 1,000 generated tokens (targets). */
export function gpt2Rollout(tokens: readonly number[], length = 1024): Rollout {
  if (tokens.length < length) throw new Error(`gpt2Rollout: ${tokens.length} tokens, need ${length}`);
  return validateRollout(
    {
      format: 'memorywalker.rollout/v1',
      id: `gpt2-${length}`,
      vocab: GPT2_124M.vocabSize,
      tokenizer: 'gpt2',
      events: [
        { op: 'append', role: 'prompt', tokens: tokens.slice(0, 24) },
        { op: 'append', role: 'act', tokens: tokens.slice(24, length) },
      ],
    },
    { file: 'bench' },
  );
}

export interface BufferCount {
  live: number;
  peak: number;
  /** Live bytes by owner (the label before the first '.'), at the peak. */
  atPeak: Record<string, number>;
}

/** Counts the bytes of every buffer created on the device from now on (destroy() gives them back). */
export function countBuffers(device: GPUDevice): { read(): BufferCount; reset(): void } {
  const live = new Map<string, number>();
  let total = 0;
  let peak = 0;
  let atPeak: Record<string, number> = {};
  // The forward's buffers split into its layers' activations, its logits and the rest (x0, lnf, tokens).
  const owner = (label: string) =>
    /^Forward\.h\d/.test(label)
      ? 'Forward.layers'
      : label === 'Forward.logits'
        ? 'Forward.logits'
        : label.startsWith('Forward.')
          ? 'Forward.other'
          : label.split(/[.(@]/)[0] || '(unlabelled)';
  const create = device.createBuffer.bind(device);
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    const buffer = create(descriptor);
    const who = owner(descriptor.label ?? '');
    const size = descriptor.size;
    live.set(who, (live.get(who) ?? 0) + size);
    total += size;
    if (total > peak) {
      peak = total;
      atPeak = Object.fromEntries(live);
    }
    const destroy = buffer.destroy.bind(buffer);
    let gone = false;
    buffer.destroy = () => {
      if (!gone) {
        gone = true;
        total -= size;
        live.set(who, live.get(who)! - size);
      }
      destroy();
    };
    return buffer;
  };
  return {
    read: () => ({ live: total, peak, atPeak: { ...atPeak } }),
    reset() {
      peak = total;
      atPeak = Object.fromEntries(live);
    },
  };
}

export interface Gpt2Figures {
  adapter: { maxStorageBufferBindingSize: number; maxBufferSize: number };
  /** Bytes of the model's buffers once loaded. */
  weightBytes: number;
  /** Scoring the rollout: seconds of each timed run, tokens per second (median). */
  seconds: number[];
  tokensPerSecond: number;
  targets: number;
  /** Bytes of buffers live at the peak of a scoring run, beyond the weights, by owner. */
  peakBeyondWeights: number;
  peakByOwner: Record<string, number>;
}

/** Loads the weights, scores a short rollout (pipelines compile), then times `runs` scorings of `rollout`. */
export async function measureGpt2(
  gpu: Gpu,
  weights: ModelWeights,
  warmup: Rollout,
  rollout: Rollout,
  runs: number,
  log: (line: string) => void,
): Promise<Gpt2Figures> {
  const errors: string[] = [];
  const unsubscribe = gpu.onEvent((event) => {
    if (event.type === 'uncaptured-error') errors.push(`${event.kind} error: ${event.message}`);
  });
  const counter = countBuffers(gpu.device);
  const model = createGpuModel(gpu, weights);
  await gpu.device.queue.onSubmittedWorkDone();
  const weightBytes = counter.read().live;
  log(`weights on the GPU: ${mb(weightBytes)} (one buffer, no gradients)`);
  try {
    await scoreRollouts(model, [warmup], ['logit-tree']);
    log(`warm-up scoring of ${warmup.length} tokens done`);
    counter.reset();
    const seconds: number[] = [];
    let targets = 0;
    for (let r = 0; r < runs; r++) {
      const started = performance.now();
      const scores = await scoreRollouts(model, [rollout], ['logit-tree']);
      seconds.push((performance.now() - started) / 1000);
      targets = scores['logit-tree'][0].size;
      log(`run ${r + 1}: ${rollout.length} tokens in ${seconds[r].toFixed(1)} s`);
    }
    await gpu.device.queue.onSubmittedWorkDone();
    // A binding over the adapter's limits would be a validation error here, not an exception.
    if (errors.length) throw new Error(`WebGPU ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
    const { peak, atPeak } = counter.read();
    const median = [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)];
    const peakByOwner = Object.fromEntries(Object.entries(atPeak).filter(([who, bytes]) => bytes > 0 && who !== 'GpuModel'));
    return {
      adapter: { maxStorageBufferBindingSize: gpu.device.limits.maxStorageBufferBindingSize, maxBufferSize: gpu.device.limits.maxBufferSize },
      weightBytes,
      seconds,
      tokensPerSecond: rollout.length / median,
      targets,
      peakBeyondWeights: peak - weightBytes,
      peakByOwner,
    };
  } finally {
    unsubscribe();
    model.destroy();
  }
}

export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
