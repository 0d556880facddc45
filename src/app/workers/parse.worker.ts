// The rollout worker: streams a rollout file (progress in bytes), then reads and validates it with
// the rollout core (`loadRolloutFile`: JSON, JSONL, calls/v1 and other importers with the page's
// tokenizer choice, gpt2's ranks loaded only when needed; all or nothing, with the import report
// `mw import` prints) and derives the rollout it sends the page (tree, view inputs, plans, masks:
// core/derived.ts) when its N_packed is within the page's limit; derives the figures of every
// rollout of a set for the data-set table; or generates a demo data set with the harness. The page
// neither parses files nor derives trees itself, so a 100 MB JSONL or a 2M-node tree leaves it responsive.
/// <reference lib="webworker" />
import { createEnv, createExpertPolicy, datasetToJsonl, generateDataset } from '../../harness';
import { formatFileReport, loadRolloutFile, type Rollout, type TokenizerName } from '../../rollout';
import { registerTokenizer } from '../../rollout/tokenizer';
import { createHfTokenizer } from '../../rollout/tokenizer-hf';
import { packedLength, rolloutRow, type RolloutRow } from '../../tree';
import { deriveView, derivedParts } from '../core/derived';
import { splitParts } from '../protocol/split';
import { loadReportOf, summaryOf, type DemoConfig, type WorkerReply, type WorkerRequest } from '../protocol/parse';
import { readBlobText } from './readBlob';

declare const self: DedicatedWorkerGlobalScope;

function post(reply: WorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

/** Parsed sets by the job that parsed them: the page's current one and the newest. */
const sets = new Map<number, Rollout[]>();

/**
 * A copy of a rollout for the page, its typed arrays moved rather than cloned (the set keeps its
 * own), derived when its N_packed is within `maxPacked`. A derived rollout is posted ahead in parts
 * (derivedParts: the page takes each in a task of its own, its arrays moved); what is left goes in the answer.
 */
function forPage(job: number, rollout: Rollout, nPacked: number, maxPacked: number) {
  const copy = {
    ...rollout,
    tokens: rollout.tokens.slice(),
    roles: rollout.roles.slice(),
    segments: rollout.segments.slice(),
    isTarget: rollout.isTarget.slice(),
    logprobs: rollout.logprobs.slice(),
    targets: rollout.targets.slice(),
  };
  const started = performance.now();
  if (nPacked > maxPacked) {
    const transfer = [copy.tokens, copy.roles, copy.segments, copy.isTarget, copy.logprobs, copy.targets].map((a) => a.buffer as ArrayBuffer);
    return { rollout: copy, nPacked, derived: null, deriveMs: 0, transfer };
  }
  post({ type: 'progress', job, phase: 'derive', done: 0, total: 0 });
  const derived = deriveView(copy);
  const deriveMs = performance.now() - started;
  for (const { part, transfer } of splitParts(derivedParts(copy, derived))) post({ type: 'part', job, part }, transfer);
  return { rollout: null as unknown as Rollout, nPacked, derived: null, split: true, deriveMs, transfer: [] };
}

/** Rows of figures, derived in slices of ~50 ms so that a `rollout` request (a click on a row) is answered in between. */
async function table(job: number, rollouts: Rollout[]): Promise<RolloutRow[]> {
  const rows: RolloutRow[] = [];
  let sliceStart = performance.now();
  for (const rollout of rollouts) {
    rows.push(rolloutRow(rollout));
    if (performance.now() - sliceStart > 50) {
      post({ type: 'progress', job, phase: 'figures', done: rows.length, total: rollouts.length });
      await new Promise((resolve) => setTimeout(resolve, 0));
      sliceStart = performance.now();
    }
  }
  return rows;
}

async function generate(config: DemoConfig): Promise<string> {
  const env = createEnv(config.env);
  const { rollouts } = await generateDataset({ env: config.env, editor: config.editor, n: config.n, seed: config.seed }, createExpertPolicy(env));
  return datasetToJsonl(rollouts);
}

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  const { job } = request;
  try {
    if (request.type === 'tokenizer') {
      const tokenizer = createHfTokenizer(request.files);
      registerTokenizer(tokenizer);
      post({ type: 'tokenizer', job, name: tokenizer.name });
      return;
    }
    if (request.type === 'generate') {
      post({ type: 'generated', job, text: await generate(request.config) });
      return;
    }
    if (request.type === 'table') {
      const set = sets.get(request.set);
      if (!set) throw new Error(`set ${request.set} is not held by the worker`);
      post({ type: 'table', job, rows: await table(job, set) });
      return;
    }
    if (request.type === 'rollout') {
      const set = sets.get(request.set);
      const rollout = set?.[request.index];
      if (!rollout) throw new Error(`rollout ${request.index} of set ${request.set} is not held by the worker`);
      const { transfer, ...reply } = forPage(job, rollout, packedLength(rollout), request.maxPacked);
      post({ type: 'rollout', job, ...reply }, transfer);
      return;
    }
    const started = performance.now();
    const text = await readBlobText(request.blob, (done, total) => post({ type: 'progress', job, phase: 'read', done, total }));
    const read = performance.now();
    post({ type: 'progress', job, phase: 'validate', done: 0, total: 0 });
    // A `hf:<name>` tokenizer was registered by a `tokenizer` request; the importers find it by name.
    const file = await loadRolloutFile(text, request.fileName, { tokenizer: request.tokenizer as TokenizerName });
    const { rollouts } = file;
    const validated = performance.now();
    if (rollouts.length === 0) throw new Error(`${request.fileName}: no rollouts in the file`);
    for (const key of [...sets.keys()]) if (key !== request.keep) sets.delete(key);
    sets.set(job, rollouts);
    const index = Math.max(0, request.select === null ? 0 : rollouts.findIndex((r) => r.id === request.select));
    const summaries = rollouts.map(summaryOf);
    // N_packed counted here, from the events: a tree above the page's limit is not derived (the page refuses it).
    const { transfer, ...sized } = forPage(job, rollouts[index], packedLength(rollouts[index]), request.maxPacked);
    const report = loadReportOf(file.report, formatFileReport(file.report, request.fileName));
    post({ type: 'done', job, summaries, index, ...sized, readMs: read - started, validateMs: validated - read, report }, transfer);
  } catch (error) {
    post({ type: 'error', job, message: error instanceof Error ? error.message : String(error) });
  }
};
