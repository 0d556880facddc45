// The rollout worker: streams a rollout file (progress in bytes), then reads and validates it with
// the rollout core (`loadRolloutFile`: JSON, JSONL, calls/v1 and other importers with the page's
// tokenizer choice, gpt2's ranks loaded only when needed; all or nothing, with the import report
// `mw import` prints); derives the figures of every rollout of a
// set for the data-set table; or generates a demo data set with the harness. The page never parses
// files itself, so a 100 MB JSONL leaves it responsive.
/// <reference lib="webworker" />
import { createEnv, createExpertPolicy, datasetToJsonl, generateDataset } from '../../harness';
import { formatFileReport, loadRolloutFile, type Rollout, type TokenizerName } from '../../rollout';
import { registerTokenizer } from '../../rollout/tokenizer';
import { createHfTokenizer } from '../../rollout/tokenizer-hf';
import { packedLength, rolloutRow, type RolloutRow } from '../../tree';
import { loadReportOf, summaryOf, type DemoConfig, type WorkerReply, type WorkerRequest } from '../protocol/parse';
import { readBlobText } from './readBlob';

declare const self: DedicatedWorkerGlobalScope;

function post(reply: WorkerReply, transfer: Transferable[] = []): void {
  self.postMessage(reply, transfer);
}

/** Parsed sets by the job that parsed them: the page's current one and the newest. */
const sets = new Map<number, Rollout[]>();

/** A copy of a rollout for the page, its typed arrays moved rather than cloned (the set keeps its own). */
function forPage(rollout: Rollout): { rollout: Rollout; transfer: Transferable[] } {
  const copy = {
    ...rollout,
    tokens: rollout.tokens.slice(),
    roles: rollout.roles.slice(),
    segments: rollout.segments.slice(),
    isTarget: rollout.isTarget.slice(),
    logprobs: rollout.logprobs.slice(),
    targets: rollout.targets.slice(),
  };
  const transfer = [copy.tokens, copy.roles, copy.segments, copy.isTarget, copy.logprobs, copy.targets].map((a) => a.buffer as ArrayBuffer);
  return { rollout: copy, transfer };
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
      const { rollout: copy, transfer } = forPage(rollout);
      post({ type: 'rollout', job, rollout: copy, nPacked: packedLength(rollout) }, transfer);
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
    // N_packed counted here, from the events: the page refuses a tree above its limit without deriving it.
    const nPacked = packedLength(rollouts[index]);
    const { rollout, transfer } = forPage(rollouts[index]);
    const report = loadReportOf(file.report, formatFileReport(file.report, request.fileName));
    post({ type: 'done', job, summaries, index, rollout, nPacked, readMs: read - started, validateMs: validated - read, report }, transfer);
  } catch (error) {
    post({ type: 'error', job, message: error instanceof Error ? error.message : String(error) });
  }
};
