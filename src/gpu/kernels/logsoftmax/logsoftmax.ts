// Binding of logsoftmax.wgsl: log-probabilities of requested (row, token) pairs of logits
// (M, V), the full log-prob rows of requested rows, and the backward of the gathered form.
// Reference: logsoftmaxGatherRef, logsoftmaxGatherBackwardRef in logsoftmax.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './logsoftmax.wgsl?raw';
import { uploadStorage, uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, inverseIndex, type Launch, type BufferRef } from '../../runtime/kernel';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 64;

export interface LogsoftmaxShape {
  R: number; // requests
  V: number; // vocabulary
  M: number; // rows of logits
}

/** Mirror of `struct Params` in logsoftmax.wgsl: R: u32 @ 0, V: u32 @ 4, M: u32 @ 8. */
export function logsoftmaxParams({ R, V, M }: LogsoftmaxShape): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, R, true);
  view.setUint32(4, V, true);
  view.setUint32(8, M, true);
  return bytes;
}

type Entry = 'logsumexp' | 'gather' | 'logprobRows' | 'backward';

function launch(device: GPUDevice, entry: Entry, shape: LogsoftmaxShape, items: number, accumulate: boolean, buffers: Record<number, BufferRef>): Launch {
  const pipeline = computePipeline(device, `logsoftmax.${entry}`, code, { WG, ACCUMULATE: Number(accumulate) }, entry);
  const params = uploadUniform(device, `logsoftmax.${entry}.params`, logsoftmaxParams(shape));
  const group = bindBuffers(device, `logsoftmax.${entry}.bindGroup`, pipeline, { 0: params, ...buffers });
  const [x, y] = groups1d(items, WG);
  return { label: `logsoftmax.${entry}`, pipeline, group, workgroups: items === 0 ? [0, 0, 0] : [x, y, 1], uniforms: [params] };
}

function checkForward(shape: LogsoftmaxShape, b: { logits: BufferRef; rows: BufferRef; lse: BufferRef }): void {
  checkLength(b.logits, shape.M * shape.V, 'logits');
  checkLength(b.rows, shape.R, 'rows');
  checkLength(b.lse, shape.R, 'lse');
}

export interface LogsoftmaxGatherBuffers {
  logits: BufferRef; // (M, V)
  rows: BufferRef; // (R) u32: the logit row of each request
  tokens: BufferRef; // (R) u32: the token of each request
  lse: BufferRef; // (R): written, the log-sum-exp of each request's row (the backward reads it)
  logprobs: BufferRef; // (R): written
}

/** Two launches: logsumexp, then gather. */
export function createLogsoftmaxGather(device: GPUDevice, shape: LogsoftmaxShape, b: LogsoftmaxGatherBuffers): Launch[] {
  checkForward(shape, b);
  checkLength(b.tokens, shape.R, 'tokens');
  checkLength(b.logprobs, shape.R, 'logprobs');
  return [
    launch(device, 'logsumexp', shape, shape.R, false, { 1: b.logits, 2: b.rows, 4: b.lse }),
    launch(device, 'gather', shape, shape.R, false, { 1: b.logits, 2: b.rows, 3: b.tokens, 4: b.lse, 5: b.logprobs }),
  ];
}

export interface LogsoftmaxRowsBuffers {
  logits: BufferRef; // (M, V)
  rows: BufferRef; // (R) u32
  lse: BufferRef; // (R): written
  out: BufferRef; // (R, V): written, log softmax of logits[rows[j]]
}

/** Two launches: logsumexp, then the full log-prob rows. */
export function createLogsoftmaxRows(device: GPUDevice, shape: LogsoftmaxShape, b: LogsoftmaxRowsBuffers): Launch[] {
  checkForward(shape, b);
  checkLength(b.out, shape.R * shape.V, 'out');
  return [
    launch(device, 'logsumexp', shape, shape.R, false, { 1: b.logits, 2: b.rows, 4: b.lse }),
    launch(device, 'logprobRows', shape, shape.R * shape.V, false, { 1: b.logits, 2: b.rows, 4: b.lse, 6: b.out }),
  ];
}

/** The requests of each logit row (inverseIndex of `rows`), uploaded for the backward. */
export interface RequestIndex {
  order: BufferRef; // (R) u32
  start: BufferRef; // (M + 1) u32
  destroy(): void;
}

export function uploadRequestIndex(device: GPUDevice, rows: ArrayLike<number>, M: number): RequestIndex {
  const { order, start } = inverseIndex(rows, M);
  const buffers = {
    order: uploadStorage(device, 'logsoftmax.order', order),
    start: uploadStorage(device, 'logsoftmax.start', start),
  };
  return { ...buffers, destroy: () => Object.values(buffers).forEach((b) => b.destroy()) };
}

export interface LogsoftmaxGatherBackwardBuffers {
  logits: BufferRef; // (M, V)
  tokens: BufferRef; // (R) u32
  lse: BufferRef; // (R): from createLogsoftmaxGather
  dLogprob: BufferRef; // (R)
  dLogits: BufferRef; // (M, V): written (rows no request names get zeros), or += with accumulate
}

export function createLogsoftmaxGatherBackward(
  device: GPUDevice,
  shape: LogsoftmaxShape,
  index: RequestIndex,
  b: LogsoftmaxGatherBackwardBuffers,
  options: { accumulate?: boolean } = {},
): Launch {
  const { R, V, M } = shape;
  checkLength(b.logits, M * V, 'logits');
  checkLength(b.tokens, R, 'tokens');
  checkLength(b.lse, R, 'lse');
  checkLength(b.dLogprob, R, 'dLogprob');
  checkLength(b.dLogits, M * V, 'dLogits');
  checkLength(index.start, M + 1, 'start');
  return launch(device, 'backward', shape, M * V, !!options.accumulate, {
    1: b.logits,
    3: b.tokens,
    4: b.lse,
    7: b.dLogprob,
    8: index.order,
    9: index.start,
    10: b.dLogits,
  });
}
