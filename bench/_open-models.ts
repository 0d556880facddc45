// What bench/open-models.ts measures, shared by its Node run and its Chromium page (bench/open-models-page):
// the published config.json of SmolLM2-135M and Qwen3-0.6B, their random bf16 weights (every tensor drawn
// from a stream seeded by its name, so a folder cut to fewer layers holds the same tensors), a rollout with
// two edits, and the load (bytes on the GPU against the file, time) and scoring (forward tokens/s, peak
// beyond the weights) of a model folder; and the comparison rollout (one causal sequence) that the ONNX
// export runs in onnxruntime-web.

import { loadFamilyModel, type FamilyGpuModel } from '../src/gpu/family-model';
import type { Gpu } from '../src/gpu/runtime/device';
import { scoreRollouts } from '../src/gpu/score';
import type { FamilyConfig, FolderTensorSource } from '../src/model/family/config';
import type { EventJson } from '../src/rollout/format';
import type { Rollout } from '../src/rollout/rollout';
import { validateRollout } from '../src/rollout/validate';
import { OPEN_MODELS } from '../src/testing/openModels';
import { countBuffers, mb } from './_gpt2';

export { mb };

export { OPEN_MODELS };

export type OpenModelName = keyof typeof OPEN_MODELS;

/** 32-bit FNV-1a of a tensor's name: the seed of its stream. */
function nameSeed(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0 || 1;
}

/**
 * The bf16 bytes of tensor `name` with `count` elements, in chunks of at most `chunk` elements: norm weights
 * near 1, the rest uniform with the standard deviation of the config's initializer (scaled down for deep
 * stacks so that random activations stay finite). A xorshift stream seeded by the name: fast and the same
 * in every folder that holds the tensor.
 */
export function* tensorBytes(name: string, count: number, std: number, chunk = 1 << 22): Generator<Uint8Array> {
  let s = nameSeed(name);
  const norm = /norm\.weight$/.test(name);
  const half = std * Math.sqrt(3); // uniform on [-half, half) has this std
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let at = 0; at < count; at += chunk) {
    const n = Math.min(chunk, count - at);
    const out = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      const r = (s >>> 0) / 4294967296; // [0, 1)
      f32[0] = norm ? 1 + (r - 0.5) * 0.2 : (2 * r - 1) * half;
      out[i] = (u32[0] + 0x7fff + ((u32[0] >>> 16) & 1)) >>> 16;
    }
    yield new Uint8Array(out.buffer);
  }
}

/** A rollout of `length` tape tokens with two edits (compactions: the prompt, a summary, the latest act kept). */
export function editedRollout(config: FamilyConfig, length: number, seed = 1): Rollout {
  let s = seed >>> 0 || 1;
  const token = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % config.vocabSize;
  };
  const tokens = (n: number) => Array.from({ length: n }, token);
  const prompt = Math.max(4, Math.floor(length / 8));
  const summary = Math.max(2, Math.floor(length / 32));
  const keep = Math.max(2, Math.floor(length / 16));
  const acts = length - prompt - 2 * summary; // three acts, split evenly
  const a = Math.floor(acts / 3);
  const sizes = [a, a, acts - 2 * a];
  if (sizes[0] < keep) throw new Error(`editedRollout: ${length} tokens is too short for two edits`);
  const events: EventJson[] = [{ op: 'append', role: 'prompt', tokens: tokens(prompt) }];
  let next = prompt;
  for (let k = 0; k < 3; k++) {
    events.push({ op: 'append', role: 'act', tokens: tokens(sizes[k]) });
    next += sizes[k];
    if (k < 2) {
      // Keep the prompt, insert a summary, keep the act's last `keep` tokens.
      events.push({ op: 'edit', view: [{ keep: [0, prompt] }, { insert: { role: 'summary', tokens: tokens(summary) } }, { keep: [next - keep, next] }] });
      next += summary;
    }
  }
  return validateRollout(
    { format: 'memorywalker.rollout/v1', id: `edited-${length}`, vocab: config.vocabSize, tokenizer: `hf:${config.name}`, events },
    { file: 'bench' },
  );
}

/** One causal sequence: a 1-token prompt and `length − 1` act tokens (ids 0 .. length − 1), for the ONNX comparison. */
export function causalRollout(config: FamilyConfig, tokens: readonly number[]): Rollout {
  return validateRollout(
    {
      format: 'memorywalker.rollout/v1',
      id: `causal-${tokens.length}`,
      vocab: config.vocabSize,
      tokenizer: `hf:${config.name}`,
      events: [
        { op: 'append', role: 'prompt', tokens: tokens.slice(0, 1) },
        { op: 'append', role: 'act', tokens: tokens.slice(1) },
      ],
    },
    { file: 'bench' },
  );
}

export interface OpenModelFigures {
  adapter: { maxStorageBufferBindingSize: number; maxBufferSize: number; shaderF16: boolean };
  layers: number;
  /** Bytes of the weights' buffers once loaded, and of the safetensors tensors read. */
  weightBytes: number;
  fileBytes: number;
  loadSeconds: number;
  /** Tape tokens of the rollout scored, its targets, seconds of each timed run, tokens per second (median). */
  tokens: number;
  targets: number;
  seconds: number[];
  tokensPerSecond: number;
  /** Bytes of buffers live at the peak of a scoring run, beyond the weights, by owner. */
  peakBeyondWeights: number;
  peakByOwner: Record<string, number>;
}

/** Loads a folder's tensors onto the GPU, scores `warmup` (pipelines compile), then times `runs` scorings of `rollout`. */
export async function measureOpenModel(
  gpu: Gpu,
  config: FamilyConfig,
  source: FolderTensorSource,
  warmup: Rollout,
  rollout: Rollout,
  runs: number,
  log: (line: string) => void,
  then?: (model: FamilyGpuModel) => Promise<void>,
): Promise<OpenModelFigures> {
  const errors: string[] = [];
  const unsubscribe = gpu.onEvent((event) => {
    if (event.type === 'uncaptured-error') errors.push(`${event.kind} error: ${event.message}`);
  });
  const counter = countBuffers(gpu.device);
  let started = performance.now();
  const model = await loadFamilyModel(gpu, config, source);
  await gpu.device.queue.onSubmittedWorkDone();
  const loadSeconds = (performance.now() - started) / 1000;
  const weightBytes = counter.read().live;
  log(
    `loaded ${mb(model.fileBytes)} of tensors in ${loadSeconds.toFixed(1)} s: ${mb(weightBytes)} on the GPU (${(weightBytes / model.fileBytes).toFixed(4)} × the file)`,
  );
  try {
    await scoreRollouts(model, [warmup], ['logit-tree']);
    log(`warm-up scoring of ${warmup.length} tokens done`);
    counter.reset();
    const seconds: number[] = [];
    let targets = 0;
    for (let r = 0; r < runs; r++) {
      started = performance.now();
      const scores = await scoreRollouts(model, [rollout], ['logit-tree']);
      seconds.push((performance.now() - started) / 1000);
      targets = scores['logit-tree'][0].size;
      const bad = [...scores['logit-tree'][0].values()].filter((t) => !Number.isFinite(t.logprob)).length;
      if (bad) throw new Error(`${bad} of ${targets} log-probabilities are not finite`);
      log(`run ${r + 1}: ${rollout.length} tokens (${targets} targets) in ${seconds[r].toFixed(1)} s`);
    }
    await gpu.device.queue.onSubmittedWorkDone();
    // A binding over the adapter's limits would be a validation error here, not an exception.
    if (errors.length) throw new Error(`WebGPU ${errors[0]}${errors.length > 1 ? ` (and ${errors.length - 1} more)` : ''}`);
    const { peak, atPeak } = counter.read();
    const median = [...seconds].sort((a, b) => a - b)[Math.floor(seconds.length / 2)];
    await then?.(model);
    return {
      adapter: {
        maxStorageBufferBindingSize: gpu.device.limits.maxStorageBufferBindingSize,
        maxBufferSize: gpu.device.limits.maxBufferSize,
        shaderF16: gpu.device.features.has('shader-f16'),
      },
      layers: config.nLayer,
      weightBytes,
      fileBytes: model.fileBytes,
      loadSeconds,
      tokens: rollout.length,
      targets,
      seconds,
      tokensPerSecond: rollout.length / median,
      peakBeyondWeights: peak - weightBytes,
      peakByOwner: Object.fromEntries(Object.entries(atPeak).filter(([who, bytes]) => bytes > 0 && who !== 'FamilyModel')),
    };
  } finally {
    unsubscribe();
    model.destroy();
  }
}

/** The causal comparison in this project's WGSL: seconds of one scoring and each target's log-probability (by position). */
export async function wgslCausal(model: FamilyGpuModel, rollout: Rollout): Promise<{ seconds: number; logprobs: Float64Array }> {
  await scoreRollouts(model, [rollout], ['logit-tree']); // pipelines of this length compile
  const started = performance.now();
  const scores = await scoreRollouts(model, [rollout], ['logit-tree']);
  const seconds = (performance.now() - started) / 1000;
  const logprobs = new Float64Array(rollout.length - 1);
  for (const [id, t] of scores['logit-tree'][0]) logprobs[id - 1] = t.logprob;
  return { seconds, logprobs };
}

/** Log-probabilities of tokens[1..] from (T, V) logits (row t predicts token t + 1), as scoring computes them. */
export function logprobsFromLogits(logits: Float32Array, tokens: readonly number[], V: number): Float64Array {
  const out = new Float64Array(tokens.length - 1);
  for (let t = 0; t + 1 < tokens.length; t++) {
    const row = logits.subarray(t * V, (t + 1) * V);
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, row[v]);
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(row[v] - max);
    out[t] = row[tokens[t + 1]] - max - Math.log(sum);
  }
  return out;
}

export const maxAbsDiff = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

/** Tokens of the causal comparison: drawn from the vocabulary with a fixed stream. */
export function comparisonTokens(V: number, T: number): number[] {
  let s = 12345;
  return Array.from({ length: T }, () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % V;
  });
}
