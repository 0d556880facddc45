// The scoring worker: holds the WebGPU device and one GPT-2 model (docs/model.md), and scores a rollout's
// targets under each replay method's plan (docs/methods.md) with the GPU engine. The page keeps no device.
/// <reference lib="webworker" />
import { adapterLine, createGpu, type Gpu } from '../../gpu/device';
import { createGpuModel, type GpuModel } from '../../gpu/model';
import { scorePlan } from '../../gpu/score';
import { loadCheckpoint } from '../../model/checkpoint';
import { describeConfig } from '../../model/config';
import { buildPlan, planNeeds } from '../../plan';
import { deriveTree } from '../../tree';
import { SCORED_METHODS, type MethodScores, type ScoreWorkerReply, type ScoreWorkerRequest } from '../protocol/score';

declare const self: DedicatedWorkerGlobalScope;

let gpu: Gpu | null = null;
let model: GpuModel | null = null;

function post(reply: ScoreWorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

self.onmessage = async (event: MessageEvent<ScoreWorkerRequest>) => {
  const request = event.data;
  const { job } = request;
  try {
    if (request.type === 'load') {
      const weights = loadCheckpoint(new Uint8Array(request.bytes), { maxVocab: 1 << 20 });
      gpu ??= await createGpu();
      model?.destroy();
      model = null;
      model = createGpuModel(gpu, weights);
      post({ type: 'loaded', job, description: describeConfig(weights.config), adapter: adapterLine(gpu.info) });
      return;
    }
    if (!model) throw new Error('no model loaded');
    const started = performance.now();
    const tree = deriveTree(request.rollout);
    const { vocabSize, nPositions } = model.config;
    let maxToken = 0;
    for (const t of request.rollout.tokens) if (t > maxToken) maxToken = t;
    const scores: MethodScores[] = [];
    for (const method of SCORED_METHODS) {
      post({ type: 'progress', job, method, done: scores.length, total: SCORED_METHODS.length });
      try {
        if (maxToken >= vocabSize) throw new Error(`token ${maxToken} is outside the model's vocabulary (${vocabSize})`);
        const plan = buildPlan(tree, method);
        const { positions } = planNeeds(plan);
        if (positions > nPositions) throw new Error(`needs ${positions} positions, the model has ${nPositions}`);
        const { targets } = await scorePlan(model, plan, { rows: true });
        const rows = new Float32Array(targets.length * vocabSize);
        targets.forEach((t, i) => rows.set(t.row!, i * vocabSize));
        scores.push({ method, ids: Int32Array.from(targets, (t) => t.id), logprobs: Float64Array.from(targets, (t) => t.logprob), rows });
      } catch (error) {
        scores.push({ method, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const buffers = scores.flatMap((s) => ('rows' in s ? [s.rows.buffer as ArrayBuffer] : []));
    post({ type: 'scored', job, rolloutId: request.rollout.id, scores, ms: performance.now() - started }, buffers);
  } catch (error) {
    post({ type: 'error', job, message: error instanceof Error ? error.message : String(error) });
  }
};
