// The page's worker clients against a stand-in Worker that clones every message as the browser does
// (transferred buffers are detached on the page's side), and answers as the test tells it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Rollout } from '../../rollout';
import { createParser, StaleParseError } from './parseClient';
import { splitParts } from './split';
import { createScorer, ScoreCancelledError, StaleScoreError } from './scoreClient';
import { createTrainClient } from './trainClient';

class FakeWorker {
  static made: FakeWorker[] = [];
  received: { type: string; job?: number; [field: string]: unknown }[] = [];
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((event: { message: string; preventDefault(): void }) => void) | null = null;
  terminated = false;
  constructor(
    readonly url: URL,
    readonly options: WorkerOptions,
  ) {
    FakeWorker.made.push(this);
  }
  postMessage(message: unknown, transfer: Transferable[] = []) {
    this.received.push(structuredClone(message, { transfer }) as FakeWorker['received'][number]);
  }
  terminate() {
    this.terminated = true;
  }
  /** The worker answers. */
  reply(data: object) {
    this.onmessage!({ data });
  }
  /** The worker's script fails (an uncaught error, or it does not load). */
  fail(message: string) {
    const event = { message, preventDefault: vi.fn() };
    this.onerror!(event);
    return event;
  }
}

const lastWorker = () => FakeWorker.made[FakeWorker.made.length - 1];
const rollout = { id: 'r1', length: 3 } as unknown as Rollout;

beforeEach(() => {
  FakeWorker.made = [];
  vi.stubGlobal('Worker', FakeWorker);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the rollout worker client', () => {
  it("registers a model folder's tokenizer, and again first thing in a worker started after a failure", async () => {
    const parser = createParser();
    const files = { name: 'qwen3', vocab: 320, tokenizer: { model: { type: 'BPE' } }, tokenizerConfig: {}, chatTemplate: '{{ messages }}' };
    const named = parser.useTokenizer(files);
    const worker = lastWorker();
    const request = worker.received.find((r) => r.type === 'tokenizer' && r.job !== 0)!;
    expect(request.files).toEqual(files);
    worker.reply({ type: 'tokenizer', job: request.job, name: 'hf:qwen3' });
    expect(await named).toBe('hf:qwen3');
    worker.fail('out of memory');
    void parser.table(1, () => undefined);
    const restarted = lastWorker();
    expect(restarted).not.toBe(worker);
    expect(restarted.received.map((r) => r.type)).toEqual(['tokenizer', 'table']);
    expect(restarted.received[0].files).toEqual(files);
  });

  it('starts the rollout worker on the first request, reports progress and resolves with the parsed set named by its job', async () => {
    const parser = createParser();
    expect(FakeWorker.made).toHaveLength(0);
    const progress: unknown[] = [];
    const parsed = parser.parse(new Blob(['{}']), 'a.json', { select: 'r1', keep: null }, (...p) => progress.push(p));
    const worker = lastWorker();
    expect(worker.url.pathname).toMatch(/\/src\/app\/workers\/parse\.worker\.ts$/);
    expect(worker.options).toEqual({ type: 'module', name: 'rollout-worker' });
    const request = worker.received[0];
    expect(request).toMatchObject({ type: 'parse', fileName: 'a.json', select: 'r1', keep: null });
    expect(await (request.blob as Blob).text()).toBe('{}');
    const job = request.job!;
    worker.reply({ type: 'progress', job, phase: 'read', done: 2, total: 2 });
    worker.reply({ type: 'progress', job, phase: 'validate', done: 0, total: 0 });
    worker.reply({ type: 'done', job, summaries: [{ id: 'r1', length: 3, K: 0 }], index: 0, rollout, readMs: 1, validateMs: 2 });
    expect(await parsed).toMatchObject({ set: job, index: 0, rollout, readMs: 1, validateMs: 2, summaries: [{ id: 'r1', length: 3, K: 0 }] });
    expect(progress).toEqual([
      ['read', 2, 2],
      ['validate', 0, 0],
    ]);
  });

  it('joins a derived rollout posted in parts ahead of the answer, each part taken in as it comes', async () => {
    const parser = createParser();
    const parsed = parser.parse(new Blob(['{}']), 'a.json', { select: null, keep: null, maxPacked: 100 }, () => undefined);
    const worker = lastWorker();
    const job = worker.received[0].job!;
    const tokens = Int32Array.from([5, 6, 7]);
    const whole = { id: 'r1', length: 3, tokens } as unknown as Rollout;
    const parts = splitParts([
      ['rollout', whole],
      ['view', { rollout: whole, trie: { id: Int32Array.from([0, 1, 2]) } }],
    ]);
    for (const { part, transfer } of parts) worker.reply({ type: 'part', job, part: structuredClone(part, { transfer }) });
    worker.reply({ type: 'done', job, summaries: [], index: 0, rollout: null, derived: null, split: true, nPacked: 3, readMs: 1, validateMs: 2 });
    const outcome = await parsed;
    expect(Array.from(outcome.rollout.tokens)).toEqual([5, 6, 7]);
    expect(outcome.derived!.view.rollout).toBe(outcome.rollout);
    expect(Array.from(outcome.derived!.view.trie.id)).toEqual([0, 1, 2]);
    expect(worker.received[0]).toMatchObject({ maxPacked: 100 });
  });

  it("makes an older parse stale when a newer one starts, and ignores the older one's late replies", async () => {
    const parser = createParser();
    const older = parser.parse(new Blob(['1']), 'old.json', { select: null, keep: null }, () => undefined);
    const onProgress = vi.fn();
    const newer = parser.parse(new Blob(['2']), 'new.json', { select: null, keep: 7 }, onProgress);
    await expect(older).rejects.toBeInstanceOf(StaleParseError);
    const worker = lastWorker();
    const [first, second] = worker.received;
    worker.reply({ type: 'progress', job: first.job, phase: 'read', done: 1, total: 1 });
    worker.reply({ type: 'error', job: first.job, message: 'old.json: not JSON' });
    worker.reply({ type: 'error', job: second.job, message: 'new.json:1: event 0: unknown op "x"' });
    await expect(newer).rejects.toThrow('new.json:1: event 0: unknown op "x"');
    expect(onProgress).not.toHaveBeenCalled();
    expect(second).toMatchObject({ keep: 7 });
  });

  it('fetches rollouts of a set and generated data sets; a failing worker fails every request and the next one starts a new worker', async () => {
    const parser = createParser();
    const one = parser.rollout(3, 1);
    const text = parser.generate({ env: 'lookup', editor: 'compact', n: 2, seed: 1 });
    const worker = lastWorker();
    expect(worker.received.map((r) => r.type)).toEqual(['rollout', 'generate']);
    expect(worker.received[0]).toMatchObject({ set: 3, index: 1 });
    worker.reply({ type: 'rollout', job: worker.received[0].job, rollout });
    expect(await one).toEqual(rollout);
    worker.fail('out of memory');
    await expect(text).rejects.toThrow('the rollout worker failed: out of memory');
    expect(worker.terminated).toBe(true);
    const again = parser.generate({ env: 'lookup', editor: 'compact', n: 2, seed: 1 });
    expect(FakeWorker.made).toHaveLength(2);
    lastWorker().reply({ type: 'generated', job: lastWorker().received[0].job, text: '{"id":"a"}\n' });
    expect(await again).toBe('{"id":"a"}\n');
  });
});

describe('the scoring worker client', () => {
  it("moves the checkpoint's bytes to the worker and resolves with the model it loaded", async () => {
    const scorer = createScorer();
    const worker = lastWorker();
    expect(worker.url.pathname).toMatch(/\/src\/app\/workers\/score\.worker\.ts$/);
    const bytes = new Uint8Array([1, 2, 3, 4]).buffer;
    const loaded = scorer.load(bytes, 'gpt2.safetensors');
    expect(bytes.byteLength).toBe(0); // transferred, not copied
    const request = worker.received[0];
    expect([...new Uint8Array(request.bytes as ArrayBuffer)]).toEqual([1, 2, 3, 4]);
    worker.reply({ type: 'loaded', job: request.job, description: 'V 272, C 32', adapter: 'swiftshader' });
    expect(await loaded).toMatchObject({ description: 'V 272, C 32', adapter: 'swiftshader' });
  });

  it("sends a model folder's files by name, reports its load in bytes and resolves with the model and its tokenizer files", async () => {
    const scorer = createScorer();
    const worker = lastWorker();
    const files = new Map([
      ['config.json', new Blob(['{}'])],
      ['model.safetensors', new Blob([new Uint8Array([1, 2])])],
    ]);
    const progress: [number, number][] = [];
    const loaded = scorer.loadFolder('qwen3', files, (bytes, total) => progress.push([bytes, total]));
    const request = worker.received[0];
    expect(request).toMatchObject({ type: 'load-folder', name: 'qwen3' });
    const sent = request.files as Map<string, Blob>;
    expect([...sent.keys()]).toEqual(['config.json', 'model.safetensors']);
    expect(await sent.get('config.json')!.text()).toBe('{}');
    worker.reply({ type: 'load-progress', job: request.job, bytes: 1024, total: 4096 });
    worker.reply({ type: 'load-progress', job: request.job, bytes: 4096, total: 4096 });
    const tokenizer = { name: 'qwen3', vocab: 320, tokenizer: { model: {} }, tokenizerConfig: {}, chatTemplate: null };
    worker.reply({ type: 'loaded', job: request.job, kind: 'family', tokenizer, description: 'Qwen3ForCausalLM qwen3: V 320', adapter: 'swiftshader' });
    expect(await loaded).toMatchObject({ kind: 'family', tokenizer, description: 'Qwen3ForCausalLM qwen3: V 320' });
    expect(progress).toEqual([
      [1024, 4096],
      [4096, 4096],
    ]);
    const refused = scorer.loadFolder('bad', new Map(), () => undefined);
    worker.reply({ type: 'error', job: worker.received.at(-1)!.job, message: 'bad: no config.json' });
    await expect(refused).rejects.toThrow('bad: no config.json');
  });

  it('reports progress in tokens; a newer score makes the older stale and stops it in the worker; errors reject with their message', async () => {
    const scorer = createScorer();
    const worker = lastWorker();
    const older = scorer.score(rollout, () => undefined);
    const progress: unknown[] = [];
    const newer = scorer.score(rollout, (p) => progress.push(p));
    await expect(older).rejects.toBeInstanceOf(StaleScoreError);
    expect(worker.received.map((r) => r.type)).toEqual(['score', 'cancel', 'score']);
    expect(worker.received[1].job).toBe(worker.received[0].job);
    const job = worker.received[2].job;
    worker.reply({ type: 'progress', job, method: 'naive-full', done: 1, total: 4, tokens: 120, tokensTotal: 480 });
    worker.reply({ type: 'scored', job, rolloutId: 'r1', scores: [], ms: 5 });
    expect(await newer).toMatchObject({ rolloutId: 'r1', ms: 5 });
    expect(progress).toEqual([{ method: 'naive-full', done: 1, total: 4, tokens: 120, tokensTotal: 480 }]);
    const failing = scorer.score(rollout, () => undefined);
    const failingJob = worker.received.at(-1)!.job;
    worker.reply({ type: 'error', job: failingJob, message: 'no model loaded' });
    await expect(failing).rejects.toThrow('no model loaded');
    const cancelled = scorer.score(rollout, () => undefined);
    const cancelledJob = worker.received.at(-1)!.job;
    scorer.cancelScore();
    await expect(cancelled).rejects.toBeInstanceOf(ScoreCancelledError);
    expect(worker.received.at(-1)).toEqual({ type: 'cancel', job: cancelledJob });
    const lost = scorer.score(rollout, () => undefined);
    worker.fail('device lost');
    await expect(lost).rejects.toThrow('the scoring worker failed: device lost');
  });
});

describe('the training worker client', () => {
  it('sends commands, hands replies without a job to the store, and settles the requests that carry one', async () => {
    const replies: unknown[] = [];
    const client = createTrainClient((reply) => replies.push(reply));
    const worker = lastWorker();
    expect(worker.url.pathname).toMatch(/\/src\/app\/workers\/train\.worker\.ts$/);
    client.send({ type: 'hello' });
    const bytes = new Uint8Array([5, 6, 7]);
    const imported = client.request((job) => ({ type: 'import-checkpoint', job, name: 'w.safetensors', bytes }), [bytes.buffer]);
    expect(bytes.byteLength).toBe(0); // transferred
    const exported = client.request((job) => ({ type: 'export-checkpoint', job, method: 'sdcc' }));
    const [hello, importRequest, exportRequest] = worker.received;
    expect(hello).toEqual({ type: 'hello' });
    expect([...(importRequest.bytes as Uint8Array)]).toEqual([5, 6, 7]);
    worker.reply({ type: 'status', status: { phase: 'running' } });
    worker.reply({ type: 'imported', job: importRequest.job, name: 'w.safetensors', model: {} });
    worker.reply({ type: 'failed', job: exportRequest.job, message: 'no lane sdcc' });
    expect(await imported).toMatchObject({ type: 'imported', name: 'w.safetensors' });
    await expect(exported).rejects.toThrow('no lane sdcc');
    expect(replies).toEqual([{ type: 'status', status: { phase: 'running' } }]);
  });

  it('reports a worker that fails to start as training unavailable', () => {
    const replies: unknown[] = [];
    createTrainClient((reply) => replies.push(reply));
    const event = lastWorker().fail('SyntaxError: bad module');
    expect(event.preventDefault).toHaveBeenCalled();
    expect(replies).toEqual([
      { type: 'status', status: { phase: 'unavailable', reason: 'the training worker failed to start: SyntaxError: bad module', cause: 'no-webgpu' } },
    ]);
  });
});
