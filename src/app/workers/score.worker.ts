// The scoring worker: holds the WebGPU device and one GPT-2 model (docs/model.md), and scores a rollout's
// targets under each replay method's plan (docs/methods.md) with the GPU engine. The page keeps no device.
// Requests run one at a time in arrival order, so a checkpoint never changes under a scoring pass and
// the shown rollout's request waits for at most one rollout of a data-set table being summarized.
/// <reference lib="webworker" />
import { adapterLine, createGpu, type Gpu } from '../../gpu/device';
import { createGpuModel, type GpuModel } from '../../gpu/model';
import { scorePlan } from '../../gpu/score';
import { loadCheckpoint } from '../../model/checkpoint';
import { describeConfig } from '../../model/config';
import { buildPlan, planNeeds } from '../../plan';
import type { Rollout } from '../../rollout';
import { deriveTree, type ConditioningTree } from '../../tree';
import { driftOf, driftRow } from '../core/drift';
import { SCORED_METHODS, type MethodScores, type ScoredMethod, type ScoreWorkerReply, type ScoreWorkerRequest } from '../protocol/score';

declare const self: DedicatedWorkerGlobalScope;

let gpu: Gpu | null = null;
let model: GpuModel | null = null;

function post(reply: ScoreWorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

/** Every target under every scored method; a method that cannot run on this model says why. */
async function scoreAll(model: GpuModel, rollout: Rollout, tree: ConditioningTree, onMethod: (method: ScoredMethod, done: number) => void): Promise<MethodScores[]> {
  const { vocabSize, nPositions } = model.config;
  let maxToken = 0;
  for (const t of rollout.tokens) if (t > maxToken) maxToken = t;
  const scores: MethodScores[] = [];
  for (const method of SCORED_METHODS) {
    onMethod(method, scores.length);
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
  return scores;
}

async function handle(request: ScoreWorkerRequest): Promise<void> {
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
    if (request.type === 'summarize') {
      const scores = await scoreAll(model, request.rollout, tree, () => undefined);
      post({ type: 'summary', job, rolloutId: request.rollout.id, row: driftRow(driftOf({ rollout: request.rollout, tree }, scores)) });
      return;
    }
    const total = SCORED_METHODS.length;
    const scores = await scoreAll(model, request.rollout, tree, (method, done) => post({ type: 'progress', job, method, done, total }));
    const buffers = scores.flatMap((s) => ('rows' in s ? [s.rows.buffer as ArrayBuffer] : []));
    post({ type: 'scored', job, rolloutId: request.rollout.id, scores, ms: performance.now() - started }, buffers);
  } catch (error) {
    post({ type: 'error', job, message: error instanceof Error ? error.message : String(error) });
  }
}

let queue: Promise<void> = Promise.resolve();
self.onmessage = (event: MessageEvent<ScoreWorkerRequest>) => {
  const request = event.data;
  queue = queue.then(() => handle(request));
};
