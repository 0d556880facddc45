// The rollout worker: streams a rollout file (progress in bytes), then reads and validates it with
// the rollout core (`parseRolloutFile`: JSON, JSONL, calls/v1 and other importers, all or
// nothing); or generates a demo data set with the harness. The page never parses files itself,
// so a 100 MB JSONL leaves it responsive.
/// <reference lib="webworker" />
import { createEnv, createExpertPolicy, datasetToJsonl, generateDataset } from '../../harness';
import { parseRolloutFile, type Rollout } from '../../rollout';
import { summaryOf, type DemoConfig, type WorkerReply, type WorkerRequest } from '../protocol/parse';
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

async function generate(config: DemoConfig): Promise<string> {
  const env = createEnv(config.env);
  const { rollouts } = await generateDataset({ env: config.env, editor: config.editor, n: config.n, seed: config.seed }, createExpertPolicy(env));
  return datasetToJsonl(rollouts);
}

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  const { job } = request;
  try {
    if (request.type === 'generate') {
      post({ type: 'generated', job, text: await generate(request.config) });
      return;
    }
    if (request.type === 'rollout') {
      const set = sets.get(request.set);
      const rollout = set?.[request.index];
      if (!rollout) throw new Error(`rollout ${request.index} of set ${request.set} is not held by the worker`);
      const { rollout: copy, transfer } = forPage(rollout);
      post({ type: 'rollout', job, rollout: copy }, transfer);
      return;
    }
    const started = performance.now();
    const text = await readBlobText(request.blob, (done, total) => post({ type: 'progress', job, phase: 'read', done, total }));
    const read = performance.now();
    post({ type: 'progress', job, phase: 'validate', done: 0, total: 0 });
    const rollouts = parseRolloutFile(text, request.fileName);
    const validated = performance.now();
    if (rollouts.length === 0) throw new Error(`${request.fileName}: no rollouts in the file`);
    for (const key of [...sets.keys()]) if (key !== request.keep) sets.delete(key);
    sets.set(job, rollouts);
    const index = Math.max(0, request.select === null ? 0 : rollouts.findIndex((r) => r.id === request.select));
    const summaries = rollouts.map(summaryOf);
    const { rollout, transfer } = forPage(rollouts[index]);
    post({ type: 'done', job, summaries, index, rollout, readMs: read - started, validateMs: validated - read }, transfer);
  } catch (error) {
    post({ type: 'error', job, message: error instanceof Error ? error.message : String(error) });
  }
};
