// `mw import FILE [--from FORMAT] --out OUT.jsonl`: converts a file of another format into v1
// rollouts (docs/importers.md). Agent-session logs and chat JSONL stream line by line (memory follows the
// record count, not the bytes); the output appears only when the import succeeded, written to a
// temporary file first. The import report goes to stderr.

import { closeSync, createReadStream, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ValidationError, quote } from '../rollout/errors';
import { streamAgentSession } from '../rollout/importers/agentSession';
import { CALLS_FORMAT, importCalls } from '../rollout/importers/calls';
import { formats, wrongFormat, type FormatRow } from '../rollout/importers/detect';
import type { OpenSource } from '../rollout/importers/lines';
import { readTurnsText } from '../rollout/importers/turns';
import { detectFileKind, importerRollouts, sampleFile } from '../rollout/stream';
import { formatFileReport, type FileReport, type ImportReport } from '../rollout/importers/report';
import { readJsonRecords } from '../rollout/records';
import { stringifyRollout } from '../rollout/serialize';
import { DEFAULT_TOKENIZER, TOKENIZER_NAMES, isTokenizerName, loadTokenizer, loadTokenizers, tokenizerField, type TokenizerName } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import { UsageError, type Command } from './command';
import { checkOutputPath, fileArgument, openRolloutFile } from './shared';

/** `auto`, then every format of the table (src/rollout/importers/detect.ts). */
const FORMATS = ['auto', ...formats.map((row) => row.name)];

/** The row that reads a file: a whole-file importer's, or the core's (v1, calls, ...: `rollout`). */
async function detectRow(file: string): Promise<FormatRow> {
  const kind = await detectFileKind(() => createReadStream(file), file);
  return kind.kind === 'file' ? kind.row : rowNamed('rollout');
}

function rowNamed(name: string): FormatRow {
  const row = formats.find((r) => r.name === name);
  if (!row) throw new UsageError(`unknown format ${quote(name)} (${FORMATS.join(', ')})`);
  return row;
}

/** Whether every record of a file the core reads is a calls log (an unreadable one is left to the import to report). */
async function isCallsFile(file: string): Promise<boolean> {
  try {
    const { records } = readJsonRecords(await readFile(file, 'utf8'), file);
    return records.length > 0 && records.every(({ value }) => (value as { format?: unknown } | null)?.format === CALLS_FORMAT);
  } catch {
    return false;
  }
}

/** Synchronous buffered writes to a file descriptor: importers emit from synchronous callbacks. */
function createWriter(fd: number) {
  let parts: string[] = [];
  let size = 0;
  const flush = () => {
    if (parts.length) writeSync(fd, parts.join(''));
    parts = [];
    size = 0;
  };
  return {
    write(text: string) {
      parts.push(text);
      size += text.length;
      if (size >= 1 << 20) flush();
    },
    flush,
  };
}

type Writer = ReturnType<typeof createWriter>;

/** Writes through `produce` to a temporary file beside `out`, renamed to `out` only on success. */
async function writeAtomically<T>(out: string, produce: (w: Writer) => Promise<T>): Promise<T> {
  const temp = `${out}.${process.pid}.partial`;
  const fd = openSync(temp, 'w');
  let closed = false;
  try {
    const writer = createWriter(fd);
    const result = await produce(writer);
    writer.flush();
    closeSync(fd);
    closed = true;
    renameSync(temp, out);
    return result;
  } catch (error) {
    if (!closed) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
}

function importAgentSessionFile(file: string, out: string, tokenizer: TokenizerName): Promise<ImportReport> {
  const source: OpenSource = () => createReadStream(file);
  return writeAtomically(out, async (w) => {
    let first = true;
    const head = await streamAgentSession(
      source,
      (event) => {
        w.write(first ? JSON.stringify(event) : `,${JSON.stringify(event)}`);
        first = false;
      },
      // The rollout's fields before its events; `meta` (with the report) follows them.
      { file, tokenizer, onStart: (fields) => w.write(`${JSON.stringify(fields).slice(0, -1)},"events":[`) },
    );
    w.write(`],"meta":${JSON.stringify(head.meta)}}\n`);
    return head.meta.import;
  });
}

/** Any other whole-file format: rollouts validated and written one at a time (streamed where its importer streams). */
function importRows(file: string, out: string, row: Extract<FormatRow, { kind: 'file' }>, tokenizer: TokenizerName | undefined): Promise<FileReport> {
  return writeAtomically(out, async (w) => {
    const rollouts = importerRollouts(row.importer, () => createReadStream(file), file, tokenizer ? { tokenizer } : {});
    for (let next = await rollouts.next(); ; next = await rollouts.next()) {
      if (next.done) return next.value;
      validateRollout(next.value.value, { file, line: next.value.line });
      w.write(`${JSON.stringify(next.value.value)}\n`);
    }
  });
}

/** A trainer's turn records: read whole (a trajectory's turns may lie anywhere in the file), their ids checked against `tokenizer`'s vocabulary. */
async function importTurnsFile(file: string, out: string, tokenizer: TokenizerName | undefined): Promise<FileReport> {
  const dump = readTurnsText(await readFile(file, 'utf8'), file, { tokenizer });
  await writeAtomically(out, async (w) => {
    for (const { value, line } of dump.rollouts()) {
      validateRollout(value, { file, line });
      w.write(`${JSON.stringify(value)}\n`);
    }
  });
  return { kind: 'turns', convention: dump.convention, records: dump.records, rollouts: dump.trajectories };
}

/** Calls logs and anything else the core reads: validated and written one rollout at a time. */
async function importWholeFile(file: string, out: string, format: 'calls' | 'rollout', tokenizer: TokenizerName | undefined): Promise<number> {
  if (format === 'calls') {
    const { records } = readJsonRecords(await readFile(file, 'utf8'), file);
    await loadTokenizers(records.map(({ value }) => tokenizerField(value)));
    const rollouts = records.map(({ value, line }) => {
      const source = line === undefined ? { file } : { file, line };
      const obj = value as Record<string, unknown> | null;
      if (typeof obj !== 'object' || obj === null || obj.format !== CALLS_FORMAT) {
        throw new ValidationError(source, `not a ${CALLS_FORMAT} record (format ${quote(obj?.format)})`);
      }
      const rollout = importCalls(obj, source, { tokenizer });
      validateRollout(rollout, source);
      return rollout;
    });
    await writeAtomically(out, async (w) => {
      for (const rollout of rollouts) w.write(`${JSON.stringify(rollout)}\n`);
    });
    return rollouts.length;
  }
  const stream = await openRolloutFile(file);
  return writeAtomically(out, async (w) => {
    let n = 0;
    for await (const rollout of stream.rollouts()) {
      w.write(`${stringifyRollout(rollout)}\n`);
      n++;
    }
    return n;
  });
}

export const importCommand: Command = {
  name: 'import',
  summary: 'convert an agent-session log, chat JSONL, calls log or trainer turn dump into memorywalker.rollout/v1 JSONL',
  usage: ['mw import FILE [--from FORMAT] [--tokenizer byte|gpt2] --out OUT.jsonl'],
  details: [
    `FORMAT is one of ${FORMATS.join(', ')} (default auto: chosen from the first records of FILE; a file no format identifies is refused).`,
    'agent-session: a coding agent CLI session log (user / assistant / system records, compactions,',
    '  microcompactions); the main conversation chain becomes one rollout, other branches are reported.',
    'chat: one {"messages": [...]} conversation per line, one rollout each.',
    `calls: ${CALLS_FORMAT} black-box call logs (docs/importers.md).`,
    'turns: an RL trainer\'s per-call records in token space (TRL/slime prompt_ids, output_ids, output_log_probs;',
    '  SkyRL prompt_ids, response_ids, rollout_logprobs, trajectory_ids, is_last_step; verl prompt_ids,',
    '  response_ids, response_logprobs), grouped by trajectory, ordered by step, one rollout per trajectory.',
    '--tokenizer (docs/tokenizers.md): byte (UTF-8 bytes, vocabulary 272: the workbench\'s own models) or gpt2',
    '  (GPT-2\'s BPE, vocabulary 50257: pretrained GPT-2 checkpoints). A rollout is scored only by a model of its',
    '  tokenizer\'s vocabulary. For calls logs it names the tokenizer of their text and ids; for turn dumps, of',
    '  their ids (kept as the trainer wrote them).',
    'What was imported, skipped (with line numbers and why) or not understood is printed on stderr and',
    'kept in each rollout\'s meta.import. OUT is written only when the whole import succeeds.',
  ].join('\n'),
  flags: {
    from: { type: 'string', value: 'FORMAT', help: `input format: ${FORMATS.join(', ')} (default auto)` },
    tokenizer: { type: 'string', value: 'T', help: `how text is tokenized: ${TOKENIZER_NAMES.join(', ')} (default ${DEFAULT_TOKENIZER})` },
    out: { type: 'string', value: 'OUT', help: 'the rollout JSONL file to write' },
  },
  async run(args, io) {
    const file = fileArgument(args);
    const from = args.flags.from ?? 'auto';
    if (typeof from !== 'string' || !FORMATS.includes(from)) {
      throw new UsageError(`unknown format ${quote(from)} (${FORMATS.join(', ')})`);
    }
    const tokenizerFlag = args.flags.tokenizer;
    if (tokenizerFlag !== undefined && !isTokenizerName(tokenizerFlag)) {
      throw new UsageError(`unknown tokenizer ${quote(tokenizerFlag)} (${TOKENIZER_NAMES.join(', ')})`);
    }
    if (tokenizerFlag !== undefined) await loadTokenizer(tokenizerFlag);
    const out = args.flags.out;
    if (typeof out !== 'string' || out.length === 0) throw new UsageError('--out OUT.jsonl is required');
    if (resolve(out) === resolve(file)) throw new UsageError('--out must not be the input file');
    await checkOutputPath('out', out);
    try {
      if (!(await stat(file)).isFile()) throw new ValidationError({ file }, 'not a file');
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new ValidationError({ file }, code === 'ENOENT' ? 'no such file' : `cannot read file (${code ?? String(error)})`);
    }
    let row = from === 'auto' ? await detectRow(file) : rowNamed(from);
    if (from !== 'auto') {
      const refusal = wrongFormat(from, await sampleFile(() => createReadStream(file)), { file });
      if (refusal) throw refusal;
    }
    if (row.name === 'rollout' && tokenizerFlag !== undefined) {
      // Calls logs are one of the formats the core reads; a tokenizer goes only with them.
      if (!(await isCallsFile(file))) throw new UsageError(`--tokenizer applies to imports of text; ${file} is read by the core as it is`);
      row = rowNamed('calls');
    }
    if (row.kind === 'file' && row.name === 'agent-session') {
      // Event by event: a session's one rollout is never held whole.
      const report = await importAgentSessionFile(file, out, tokenizerFlag ?? DEFAULT_TOKENIZER);
      io.err(`${formatFileReport({ kind: 'records', report }, file)}\nwrote ${out}\n`);
    } else if (row.kind === 'file') {
      // The same lines the app shows beside the summary (formatFileReport).
      const report = row.name === 'turns' ? await importTurnsFile(file, out, tokenizerFlag) : await importRows(file, out, row, tokenizerFlag);
      io.err(`${formatFileReport(report, file)}\nwrote ${out}\n`);
    } else {
      const calls = row.name === 'calls';
      const n = await importWholeFile(file, out, calls ? 'calls' : 'rollout', tokenizerFlag);
      io.err(`${formatFileReport({ kind: 'core', rollouts: n, ...(calls ? { format: CALLS_FORMAT } : {}) }, file)}\nwrote ${out}\n`);
    }
    return 0;
  },
};
