// The page's side of the rollout worker: one worker, a promise per job, progress through a
// callback. A newer parse makes an older one stale (its promise rejects with StaleParseError).
import type { Rollout } from '../../rollout';
import type { HfTokenizerFiles } from '../../rollout/tokenizer-hf';
import { fromParts } from '../core/derived';
import { createJobs } from './jobs';
import { createJoiner, type PartsJoiner } from './split';
import type { RolloutRow } from '../../tree';
import type { DemoConfig, Generated, ParseDone, ParsePhase, ParseRequest, RolloutReply, TableDone, WorkerReply, WorkerRequest } from './parse';

/** A parse's answer; `set`, the job that parsed the set, names it in later `rollout` requests. */
export type ParseOutcome = Omit<ParseDone, 'type' | 'job'> & { set: number };

export class StaleParseError extends Error {
  constructor() {
    super('superseded by a newer file');
  }
}

/** What a parse sends besides the file (ParseRequest); the tokenizer defaults to byte, the largest tree to none. */
export type ParseOptions = Pick<ParseRequest, 'select' | 'keep'> & Partial<Pick<ParseRequest, 'tokenizer' | 'maxPacked'>>;

/** A rollout of a parsed set, with its N_packed and, within the limit asked for, its view data. */
export type SizedRollout = Omit<RolloutReply, 'type' | 'job'>;

export interface Parser {
  parse(blob: Blob, fileName: string, options: ParseOptions, onProgress: (phase: ParsePhase, done: number, total: number) => void): Promise<ParseOutcome>;
  /** Rollout `index` of a parsed set. */
  rollout(set: number, index: number): Promise<Rollout>;
  /** The rollout with its N_packed, counted in the worker from the events, derived when N_packed ≤ maxPacked. */
  sizedRollout(set: number, index: number, maxPacked: number): Promise<SizedRollout>;
  /** A demo data set from the harness, as JSONL text. */
  generate(config: DemoConfig): Promise<string>;
  /** Registers a model folder's tokenizer in the worker (again after a restart of the worker); resolves with its `hf:<name>`. */
  useTokenizer(files: HfTokenizerFiles): Promise<string>;
  /** The figures of every rollout of a parsed set (progress in rollouts). */
  table(set: number, onProgress: (done: number, total: number) => void): Promise<RolloutRow[]>;
}

export function createParser(): Parser {
  let worker: Worker | null = null;
  let latestParse = 0;
  const jobs = createJobs<WorkerReply>('error', 'progress');
  /** The model folder's tokenizer the worker holds: registered again in a new worker. */
  let tokenizer: HfTokenizerFiles | null = null;

  const ensure = (): Worker => {
    if (worker) return worker;
    worker = new Worker(new URL('../workers/parse.worker.ts', import.meta.url), { type: 'module', name: 'rollout-worker' });
    worker.onmessage = (event: MessageEvent<WorkerReply>) => {
      const reply = joined(event.data);
      if (reply) jobs.settle(reply);
    };
    if (tokenizer) worker.postMessage({ type: 'tokenizer', job: 0, files: tokenizer } satisfies WorkerRequest);
    worker.onerror = (event) => {
      jobs.failAll(new Error(`the rollout worker failed: ${event.message || 'unknown error'}`));
      worker?.terminate();
      worker = null;
    };
    return worker;
  };
  /** Parts of a derived rollout by job, joined as they come (one message, one task each): see ./split.ts. */
  const joiners = new Map<number, PartsJoiner>();
  /** A `part` is taken in and goes no further (null settles nothing); an answer gets its split rollout back. */
  const joined = (reply: WorkerReply): WorkerReply | null => {
    if (reply.type === 'part') {
      let joiner = joiners.get(reply.job);
      if (!joiner) joiners.set(reply.job, (joiner = createJoiner()));
      joiner.add(reply.part);
      return null;
    }
    const joiner = joiners.get(reply.job);
    joiners.delete(reply.job);
    if (joiner && (reply.type === 'done' || reply.type === 'rollout') && reply.split) return { ...reply, ...fromParts(joiner.values()) };
    return reply;
  };
  const send = <T extends WorkerReply>(request: (job: number) => WorkerRequest, onProgress?: (reply: WorkerReply) => void) =>
    jobs.start<T>((job) => ensure().postMessage(request(job)), onProgress);

  return {
    async parse(blob, fileName, options, onProgress) {
      jobs.drop(latestParse, new StaleParseError());
      const { job, reply } = send<ParseDone>(
        (job) => ({
          type: 'parse',
          job,
          blob,
          fileName,
          select: options.select,
          keep: options.keep,
          tokenizer: options.tokenizer ?? 'byte',
          maxPacked: options.maxPacked ?? 0,
        }),
        (p) => p.type === 'progress' && p.phase !== 'figures' && onProgress(p.phase, p.done, p.total),
      );
      latestParse = job;
      return { ...(await reply), set: job };
    },
    async rollout(set, index) {
      return (await send<RolloutReply>((job) => ({ type: 'rollout', job, set, index, maxPacked: 0 })).reply).rollout;
    },
    async sizedRollout(set, index, maxPacked) {
      const { rollout, nPacked, derived, deriveMs } = await send<RolloutReply>((job) => ({ type: 'rollout', job, set, index, maxPacked })).reply;
      return { rollout, nPacked, derived, deriveMs };
    },
    async generate(config) {
      return (await send<Generated>((job) => ({ type: 'generate', job, config })).reply).text;
    },
    async useTokenizer(files) {
      tokenizer = files;
      const reply = await send<Extract<WorkerReply, { type: 'tokenizer' }>>((job) => ({ type: 'tokenizer', job, files })).reply;
      return reply.name;
    },
    async table(set, onProgress) {
      const { reply } = send<TableDone>(
        (job) => ({ type: 'table', job, set }),
        (p) => p.type === 'progress' && onProgress(p.done, p.total),
      );
      return (await reply).rows;
    },
  };
}
