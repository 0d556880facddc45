// `mw export FILE --method M --out BATCH.safetensors [--max-tokens N]`: a method's packed scoring
// plans as a `memorywalker.batch/v1` file for PyTorch trainers (docs/batch-format.md). A .jsonl set
// streams: one rollout at a time into the bins, each column spooled to its own temporary file, the
// output assembled (header, then the columns) only when every rollout went in.

import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { asOutputError, openPartial, release, removeOnExit, type PartialFile } from '../util/output-file';
import { safetensorsHeader, tensorBytes } from '../util/safetensors';
import { createBatchWriter, type BatchSink, type BatchSummary, type BatchTensorName } from '../plan/export';
import { METHODS } from '../plan/types';
import { deriveTree } from '../tree/derive';
import { UsageError, type Command } from './command';
import { integerFlag, methodFlag, requiredFlag } from './model-args';
import { MAX_PACKED_FLAG, checkOutputPath, checkSize, fileArgument, maxPackedFlag, openRolloutFile, printJson } from './shared';

/** Bytes a column gathers before it is written out. */
const COLUMN_BUFFER = 1 << 18;

/** A sink that spools each column to a file of its own in `dir`, buffered. */
function createSpool(dir: string) {
  const columns = new Map<BatchTensorName, { fd: number; parts: Uint8Array[]; size: number }>();
  const flush = (c: { fd: number; parts: Uint8Array[]; size: number }, name: string) => {
    try {
      for (const p of c.parts) writeSync(c.fd, p);
    } catch (error) {
      throw asOutputError(join(dir, name), error); // the spool's disk is full: one line naming the file
    }
    c.parts = [];
    c.size = 0;
  };
  const sink: BatchSink = {
    write(name, values) {
      let c = columns.get(name);
      if (!c) columns.set(name, (c = { fd: openSync(join(dir, name), 'w'), parts: [], size: 0 }));
      c.parts.push(tensorBytes(values)); // the writer hands over fresh arrays: a view is safe to keep
      c.size += values.byteLength;
      if (c.size >= COLUMN_BUFFER) flush(c, name);
    },
  };
  return {
    sink,
    /** Writes the header and every column, in the header's order, to `out`. */
    assemble(out: PartialFile, summary: BatchSummary) {
      out.write(safetensorsHeader(summary.tensors, summary.metadata));
      const buffer = new Uint8Array(COLUMN_BUFFER);
      for (const { name } of summary.tensors) {
        const c = columns.get(name as BatchTensorName);
        if (!c) continue; // an empty column (no targets, no pairs)
        flush(c, name);
        closeSync(c.fd);
        columns.delete(name as BatchTensorName);
        const input = openSync(join(dir, name), 'r');
        try {
          for (let n; (n = readSync(input, buffer, 0, buffer.length, null)) > 0; ) out.write(buffer.subarray(0, n));
        } finally {
          closeSync(input);
        }
      }
    },
    close() {
      for (const c of columns.values()) closeSync(c.fd);
      columns.clear();
    },
  };
}

export const exportCommand: Command = {
  name: 'export',
  summary: "a replay method's packed batch for PyTorch trainers (memorywalker.batch/v1 safetensors)",
  usage: ['mw export FILE --method M --out BATCH.safetensors [--max-tokens N] [--max-packed N] [--json]'],
  details: [
    `M is one of ${METHODS.join(', ')}.`,
    'FILE is a rollout, a .jsonl set (streamed: one rollout in memory at a time) or any importable',
    "format (a trainer's turn dump included). The plans of every rollout are packed, in file order, into",
    'packed sequences of at most N rows (a sequence that does not fit the open one starts the next; one',
    'packed sequence when --max-tokens is absent). The tensors and metadata are in docs/batch-format.md;',
    'python/ reads them (import memorywalker). A summary goes to stderr; --json also prints it on stdout.',
    'A rollout whose plan would have more rows than --max-packed (its N_packed for packed-4d) is refused, from',
    'its events, before its tree is built. OUT appears only when the whole export succeeded.',
  ].join('\n'),
  flags: {
    method: { type: 'string', value: 'M', help: 'the replay method' },
    out: { type: 'string', value: 'OUT', help: 'the batch file to write (.safetensors)' },
    'max-tokens': { type: 'string', value: 'N', help: 'most rows in one packed sequence (default: no limit)' },
    'max-packed': MAX_PACKED_FLAG,
    json: { type: 'boolean', help: 'print the summary as JSON on stdout' },
  },
  async run(args, io) {
    const file = fileArgument(args);
    const method = methodFlag(args);
    const out = requiredFlag(args, 'out', 'BATCH.safetensors');
    if (resolve(out) === resolve(file)) throw new UsageError('--out must not be the input file');
    const maxTokens = args.flags['max-tokens'] === undefined ? undefined : integerFlag(args, 'max-tokens', 0, 1);
    const limit = maxPackedFlag(args);
    await checkOutputPath('out', out, [file]);
    const rollouts = (await openRolloutFile(file)).rollouts();

    // The partial beside OUT is taken first (exclusively) and, with the spool folder, removed on every exit path.
    const partial = openPartial(out, [file]);
    let dir: string | undefined;
    let spool: ReturnType<typeof createSpool> | undefined;
    let summary: BatchSummary;
    try {
      dir = mkdtempSync(join(tmpdir(), 'mw-export-'));
      removeOnExit(dir, 'folder');
      spool = createSpool(dir);
      const writer = createBatchWriter({ method, maxTokens }, spool.sink);
      for await (const rollout of rollouts) {
        checkSize(rollout, limit, method); // from the events: a plan too large is refused before its tree is built
        writer.add(deriveTree(rollout));
      }
      summary = writer.finish();
      spool.assemble(partial, summary);
      partial.commit();
    } finally {
      partial.discard();
      spool?.close();
      if (dir !== undefined) {
        rmSync(dir, { recursive: true, force: true });
        release(dir);
      }
    }

    const lines = [
      `${file}: ${method}: ${summary.rollouts} rollout${summary.rollouts === 1 ? '' : 's'}, ${summary.targets} targets` +
        (method === 'sdcc' ? `, ${summary.pairs} KL pairs` : '') +
        ` -> ${summary.sequences} packed sequence${summary.sequences === 1 ? '' : 's'}, ${summary.rows} rows` +
        (maxTokens === undefined ? '' : ` (at most ${maxTokens} each)`),
    ];
    if (summary.labelCollisions) {
      lines.push(
        `note: ${summary.labelCollisions} target${summary.labelCollisions === 1 ? ' shares' : 's share'} a predictor row with another (siblings in the tree, e.g. a retried turn): labels holds one per row, target_rows/target_tokens hold all`,
      );
    }
    lines.push(`wrote ${out}`);
    io.err(`${lines.join('\n')}\n`);
    if (args.flags.json) {
      const { rows, sequences, targets, pairs, rollouts: count, labelCollisions } = summary;
      printJson(io, { method, out, rollouts: count, rows, sequences, targets, pairs, labelCollisions });
    }
    return 0;
  },
};
