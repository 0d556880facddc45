// The scoring worker: holds the WebGPU device and one model (docs/model.md): a GPT-2 checkpoint, or a
// model folder of the families (Llama, Qwen2, Qwen3) read from the page's File objects a tensor at a
// time (File.slice: no file is copied whole), and scores a rollout's targets under each replay method's
// plan (docs/methods.md) with the GPU engine. The page keeps no device. A model replaces the one held
// only once it is wholly on the GPU: a folder refused (a missing config, shard or tensor, an unknown
// architecture) or a failed upload leaves the model before it in place.
// Requests run one at a time in arrival order, so a checkpoint never changes under a scoring pass and
// the shown rollout's request waits for at most one rollout of a data-set table being summarized; a
// `cancel` is read at once and aborts its job at the next forward pass.
/// <reference lib="webworker" />
import { adapterLine, createGpu, type Gpu } from '../../gpu/runtime/device';
import { loadFamilyModel } from '../../gpu/family-model';
import { createGpuModel } from '../../gpu/model';
import { scoreSequences, type ScoredModel } from '../../gpu/score';
import { loadCheckpoint } from '../../model/checkpoint';
import { describeConfig } from '../../model/config';
import { describeFamilyConfig } from '../../model/family/config';
import { blobModelFolder, folderTokenizer, folderTokenizerFiles, openModelFolder } from '../../model/family/folder';
import { buildPlan, planNeeds, type SequencePlan } from '../../plan';
import { tokenizerMismatch, type Rollout } from '../../rollout';
import { deriveTree, type ConditioningTree } from '../../tree';
import { driftOf, driftRow } from '../core/drift';
import {
  CANCELLED,
  ROWS_BUDGET_BYTES,
  SCORED_METHODS,
  tokenizerMismatchMessage,
  type MethodScores,
  type ScoredMethod,
  type ScoreProgress,
  type ScoreWorkerReply,
  type ScoreWorkerRequest,
} from '../protocol/score';

declare const self: DedicatedWorkerGlobalScope;

let gpu: Gpu | null = null;
/** The model held, with what rollouts it reads: its vocabulary, positions and (a folder's) tokenizer name. */
let held: { model: ScoredModel; V: number; nPositions: number; tokenizer?: string } | null = null;

function post(reply: ScoreWorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

type Progress = Omit<ScoreProgress, 'type' | 'job'>;

/**
 * Every target under every scored method; a method that cannot run on this model says why. Rows:
 * every target's when they fit ROWS_BUDGET_BYTES (`all`), else only the diverging leaves' of the two
 * methods SDCC's KL compares (`leaves`, what a data-set table's row needs too).
 */
async function scoreAll(
  { model, V, nPositions, tokenizer }: NonNullable<typeof held>,
  rollout: Rollout,
  tree: ConditioningTree,
  want: 'all' | 'leaves',
  signal: AbortSignal,
  onProgress: (p: Progress) => void,
): Promise<MethodScores[]> {
  const mismatch = tokenizerMismatch(rollout.tokenizer, V, tokenizer);
  if (mismatch) throw new Error(tokenizerMismatchMessage(rollout.id, mismatch.reason, mismatch.model));
  const maxToken = rollout.tokens.reduce((m, t) => Math.max(m, t), 0);
  const plans = SCORED_METHODS.map((method): { method: ScoredMethod; plan: SequencePlan } | { method: ScoredMethod; error: string } => {
    try {
      if (maxToken >= V) throw new Error(`token ${maxToken} is outside the model's vocabulary (${V})`);
      const plan = buildPlan(tree, method);
      const { positions } = planNeeds(plan);
      if (positions > nPositions) throw new Error(`needs ${positions} positions, the model has ${nPositions}`);
      return { method, plan: plan as SequencePlan };
    } catch (error) {
      return { method, error: error instanceof Error ? error.message : String(error) };
    }
  });
  const sized = plans.flatMap((p) => ('plan' in p ? [p.plan] : []));
  const tokensTotal = sized.reduce((n, plan) => n + plan.sequences.reduce((m, s) => m + s.ids.length, 0), 0);
  const targets = sized.reduce((n, plan) => n + plan.sequences.reduce((m, s) => m + s.targets.length, 0), 0);
  const all = want === 'all' && targets * V * 4 <= ROWS_BUDGET_BYTES;
  const leaves = new Set(Array.from(tree.divergingLeaves));
  let tokens = 0;
  const scores: MethodScores[] = [];
  for (const [done, p] of plans.entries()) {
    if (!('plan' in p)) {
      scores.push(p);
      continue;
    }
    const { method } = p;
    onProgress({ method, done, total: plans.length, tokens, tokensTotal });
    const rows = all ? true : method === 'logit-tree' || method === 'naive-compressed' ? (id: number) => leaves.has(id) : false;
    try {
      const scored = await scoreSequences(model, p.plan.sequences, { rows, signal }, (n) => {
        tokens += n;
        onProgress({ method, done, total: plans.length, tokens, tokensTotal });
      });
      const withRows = scored.filter((t) => t.row);
      const flat = new Float32Array(withRows.length * V);
      withRows.forEach((t, i) => flat.set(t.row!, i * V));
      scores.push({
        method,
        ids: Int32Array.from(scored, (t) => t.id),
        logprobs: Float64Array.from(scored, (t) => t.logprob),
        rows: flat,
        ...(all ? {} : { rowIds: Int32Array.from(withRows, (t) => t.id) }),
      });
    } catch (error) {
      if (signal.aborted) throw error;
      scores.push({ method, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return scores;
}

/** Jobs that may still be cancelled: running or waiting in the queue. */
const controllers = new Map<number, AbortController>();

async function handle(request: Exclude<ScoreWorkerRequest, { type: 'cancel' }>, signal: AbortSignal): Promise<void> {
  const { job } = request;
  try {
    if (request.type === 'load') {
      const weights = loadCheckpoint(new Uint8Array(request.bytes));
      gpu ??= await createGpu();
      held?.model.destroy();
      held = null;
      held = { model: createGpuModel(gpu, weights), V: weights.config.vocabSize, nPositions: weights.config.nPositions };
      post({ type: 'loaded', job, kind: 'gpt2', tokenizer: null, description: describeConfig(weights.config), adapter: adapterLine(gpu.info) });
      return;
    }
    if (request.type === 'load-folder') {
      // Every header, shape and the tokenizer checked before a byte of weights is read.
      const folder = await openModelFolder(blobModelFolder(request.name, request.files));
      const name = folderTokenizer(folder)?.name;
      const tokenizer = folderTokenizerFiles(folder);
      gpu ??= await createGpu();
      let last = 0;
      const model = await loadFamilyModel(gpu, folder.config, folder.source, ({ bytes, total }) => {
        const now = performance.now();
        if (now - last < 100 && bytes < total) return;
        last = now;
        post({ type: 'load-progress', job, bytes, total });
      });
      held?.model.destroy();
      held = { model, V: folder.config.vocabSize, nPositions: folder.config.maxPositionEmbeddings, tokenizer: name };
      const description = `${describeFamilyConfig(folder.config)}, ${folder.config.name === request.name ? '' : `folder ${request.name}, `}${size(folder.source.totalBytes)}`;
      post({ type: 'loaded', job, kind: 'family', tokenizer, description, adapter: adapterLine(gpu.info) });
      return;
    }
    if (!held) throw new Error('no model loaded');
    signal.throwIfAborted();
    const started = performance.now();
    const tree = deriveTree(request.rollout);
    if (request.type === 'summarize') {
      const scores = await scoreAll(held, request.rollout, tree, 'leaves', signal, () => undefined);
      post({ type: 'summary', job, rolloutId: request.rollout.id, row: driftRow(driftOf({ rollout: request.rollout, tree }, scores)) });
      return;
    }
    let last = 0;
    const scores = await scoreAll(held, request.rollout, tree, 'all', signal, (p) => {
      // A message per forward pass, at most ~10 a second.
      const now = performance.now();
      if (now - last < 100 && p.tokens < p.tokensTotal && p.tokens > 0) return;
      last = now;
      post({ type: 'progress', job, ...p });
    });
    const buffers = scores.flatMap((s) => ('rows' in s ? [s.rows.buffer as ArrayBuffer] : []));
    post({ type: 'scored', job, rolloutId: request.rollout.id, scores, ms: performance.now() - started }, buffers);
  } catch (error) {
    post({ type: 'error', job, message: signal.aborted ? CANCELLED : error instanceof Error ? error.message : String(error) });
  }
}

function size(bytes: number): string {
  return bytes >= 2 ** 30
    ? `${(bytes / 2 ** 30).toFixed(2)} GiB`
    : bytes >= 2 ** 20
      ? `${(bytes / 2 ** 20).toFixed(1)} MiB`
      : `${(bytes / 2 ** 10).toFixed(1)} KiB`;
}

let queue: Promise<void> = Promise.resolve();
self.onmessage = (event: MessageEvent<ScoreWorkerRequest>) => {
  const request = event.data;
  if (request.type === 'cancel') {
    controllers.get(request.job)?.abort(new Error(CANCELLED));
    return;
  }
  const controller = new AbortController();
  controllers.set(request.job, controller);
  queue = queue.then(async () => {
    await handle(request, controller.signal);
    controllers.delete(request.job);
  });
};
