// `mw import FILE [--from FORMAT] --out OUT.jsonl`: converts a file of another format into v1
// rollouts (docs/importers.md). Agent-session logs, chat JSONL and turn dumps stream line by line (memory follows the
// record count, not the bytes); the output appears only when the import succeeded, written to a
// temporary file first. The import report goes to stderr.

import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ValidationError, quote } from '../rollout/errors';
import { streamAgentSession } from '../rollout/importers/agentSession';
import { CALLS_FORMAT, importCalls } from '../rollout/importers/calls';
import { detectFormat, formats, sampleText, wrongFormat, type FormatRow } from '../rollout/importers/detect';
import type { OpenSource } from '../rollout/importers/lines';
import { type IdsTokenizer, turnsRollouts } from '../rollout/importers/turns';
import { detectFileKind, importerRollouts, sampleFile } from '../rollout/stream';
import { formatFileReport, type FileReport, type ImportReport } from '../rollout/importers/report';
import { type JsonRecord, readJsonRecords } from '../rollout/records';
import { stringifyRollout } from '../rollout/serialize';
import {
  DEFAULT_TOKENIZER,
  TOKENIZER_NAMES,
  isTokenizerName,
  loadTokenizer,
  loadTokenizers,
  registerTokenizer,
  tokenizerField,
  type TokenizerName,
} from '../rollout/tokenizer';
import { type HfTokenizer, materializeEvent } from '../rollout/tokenizer-hf';
import type { EventJson, RolloutJson } from '../rollout/format';
import { ModelFolderError } from '../model/family/folder';
import { loadFolderTokenizer } from '../model/family/folder-node';
import { validateRollout } from '../rollout/validate';
import { UsageError, type Command } from './command';
import { hubCheckpointArg, hubModelName } from './hub-arg';
import { openPartial, type PartialFile } from '../util/output-file';
import { checkOutputPath, fileArgument, openRolloutFile } from './shared';

/** `auto`, then every format of the table (src/rollout/importers/detect.ts). */
const FORMATS = ['auto', ...formats.map((row) => row.name)];

/** The row that reads a file: a whole-file importer's, or the core's (v1, calls, ...: `rollout`). */
async function detectRow(file: string): Promise<FormatRow> {
  const kind = await detectFileKind(() => createReadStream(file), file);
  if (kind.kind === 'file') return kind.row;
  // A pretty-printed document (a Gemini session file, an OpenHands trajectory, SkyRL columns) is judged whole.
  if (kind.kind === 'document') {
    const row = detectFormat(await sampleOf(file), file);
    if (row?.kind === 'file') return row;
  }
  return rowNamed('rollout');
}

/** What detection judges: the file's first records, or the whole document when its first line is not JSON alone. */
async function sampleOf(file: string): Promise<unknown[]> {
  const sample = await sampleFile(() => createReadStream(file));
  return sample.length > 0 ? sample : sampleText(await readFile(file, 'utf8')).sample;
}

function rowNamed(name: string): FormatRow {
  const row = formats.find((r) => r.name === name);
  if (!row) throw new UsageError(`unknown format ${quote(name)} (${FORMATS.join(', ')})`);
  return row;
}

/** A file the core reads, as its records when every one is a calls log, else undefined (an unreadable one is left to the import to report). */
async function callsRecords(file: string): Promise<JsonRecord[] | undefined> {
  try {
    const { records } = readJsonRecords(await readFile(file, 'utf8'), file);
    return records.length > 0 && records.every(({ value }) => (value as { format?: unknown } | null)?.format === CALLS_FORMAT) ? records : undefined;
  } catch {
    return undefined;
  }
}

/** Synchronous buffered writes to a partial file: importers emit from synchronous callbacks. */
function createWriter(partial: PartialFile) {
  let parts: string[] = [];
  let size = 0;
  const flush = () => {
    if (parts.length) partial.write(parts.join(''));
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

/** Writes through `produce` to `OUT.<pid>.partial` beside `out` (never `file`, the input, under any name) (src/util/output-file.ts), renamed to `out` only on success. */
async function writeAtomically<T>(file: string, out: string, produce: (w: Writer) => Promise<T>): Promise<T> {
  const partial = openPartial(out, [file]);
  try {
    const writer = createWriter(partial);
    const result = await produce(writer);
    writer.flush();
    partial.commit();
    return result;
  } finally {
    partial.discard();
  }
}

/**
 * A model folder's tokenizer (--tokenizer MODEL-FOLDER), registered under its `hf:<name>`: importers
 * render with its chat template, and what they write is token ids (written so by `asTokens`).
 */
function folderTokenizerFlag(path: string, name?: string): HfTokenizer {
  try {
    const tk = loadFolderTokenizer(path, name);
    registerTokenizer(tk);
    return tk;
  } catch (error) {
    if (error instanceof ModelFolderError)
      throw new ValidationError({ file: error.file === basename(resolve(path)) ? path : join(path, error.file) }, error.reason);
    throw error;
  }
}

/** An event as written: with a model folder's tokenizer, its text pieces as token ids (the file then reads without the folder). */
function asTokens(event: EventJson, hf: HfTokenizer | null): EventJson[] {
  return hf ? materializeEvent(event, hf) : [event];
}

function importAgentSessionFile(file: string, out: string, tokenizer: string, hf: HfTokenizer | null): Promise<ImportReport> {
  const source: OpenSource = () => createReadStream(file);
  return writeAtomically(file, out, async (w) => {
    let first = true;
    const head = await streamAgentSession(
      source,
      (event) => {
        for (const e of asTokens(event, hf)) {
          w.write(first ? JSON.stringify(e) : `,${JSON.stringify(e)}`);
          first = false;
        }
      },
      // The rollout's fields before its events; `meta` (with the report) follows them.
      { file, tokenizer, onStart: (fields) => w.write(`${JSON.stringify(fields).slice(0, -1)},"events":[`) },
    );
    w.write(`],"meta":${JSON.stringify(head.meta)}}\n`);
    return head.meta.import;
  });
}

/**
 * Any other whole-file format: rollouts validated and written one at a time (streamed where its importer
 * streams). With a model folder's tokenizer (`hf`), text pieces are written as token ids.
 */
function importRows(
  file: string,
  out: string,
  row: Extract<FormatRow, { kind: 'file' }>,
  tokenizer: string | undefined,
  hf: HfTokenizer | null,
): Promise<FileReport> {
  return writeAtomically(file, out, async (w) => {
    // A model folder's `hf:<name>` is registered (folderTokenizerFlag): the chat importer renders with its template.
    const rollouts = importerRollouts(row.importer, () => createReadStream(file), file, tokenizer ? { tokenizer: tokenizer as TokenizerName } : {});
    for (let next = await rollouts.next(); ; next = await rollouts.next()) {
      if (next.done) return next.value;
      const { value, line } = next.value;
      const rollout: RolloutJson = hf ? { ...value, events: value.events.flatMap((e) => asTokens(e, hf)) } : value;
      validateRollout(rollout, { file, line });
      w.write(`${JSON.stringify(rollout)}\n`);
    }
  });
}

/**
 * A trainer's turn records: read twice line by line (an index of trajectories, then each aligned as its
 * turns arrive), validated and written one rollout at a time; `tokenizer` names the tokenizer of the ids.
 */
async function importTurnsFile(file: string, out: string, tokenizer: IdsTokenizer | undefined): Promise<FileReport> {
  return writeAtomically(file, out, async (w) => {
    const rollouts = turnsRollouts(() => createReadStream(file), file, { tokenizer });
    for (let next = await rollouts.next(); ; next = await rollouts.next()) {
      if (next.done) {
        const { trajectories, records, convention, unused } = next.value;
        return { kind: 'turns', convention, records, rollouts: trajectories, unused };
      }
      validateRollout(next.value.value, { file, line: next.value.line });
      w.write(`${JSON.stringify(next.value.value)}\n`);
    }
  });
}

/** Calls logs (their records, when already read) and anything else the core reads: validated and written one rollout at a time. */
async function importWholeFile(
  file: string,
  out: string,
  format: 'calls' | 'rollout',
  tokenizer: TokenizerName | undefined,
  read?: JsonRecord[],
): Promise<number> {
  if (format === 'calls') {
    const records = read ?? readJsonRecords(await readFile(file, 'utf8'), file).records;
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
    await writeAtomically(file, out, async (w) => {
      for (const rollout of rollouts) w.write(`${JSON.stringify(rollout)}\n`);
    });
    return rollouts.length;
  }
  const stream = await openRolloutFile(file);
  return writeAtomically(file, out, async (w) => {
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
  summary: 'convert an agent-session log, Codex / Gemini / OpenHands transcript, chat JSONL, calls log or trainer turn dump into memorywalker.rollout/v1 JSONL',
  usage: ['mw import FILE [--from FORMAT] [--tokenizer byte|gpt2|MODEL-FOLDER|hf:ORG/NAME] --out OUT.jsonl'],
  details: [
    `FORMAT is one of ${FORMATS.join(', ')} (default auto: chosen from the first records of FILE; a file no format identifies is refused).`,
    'agent-session: a coding agent CLI session log (user / assistant / system records, compactions,',
    '  microcompactions); the main conversation chain becomes one rollout, other branches are reported.',
    'chat: one {"messages": [...]} conversation per line, one rollout each.',
    'codex: a Codex CLI rollout-*.jsonl (session_meta, response_item, compacted, ...); each compacted item is an edit.',
    'gemini: a Gemini CLI session, the single JSON file or the JSONL recording; a rewritten message list is an edit.',
    'openhands: an OpenHands trajectory (a JSON array of action / observation events); each condensation is an edit.',
    "verl: verl's trainer.rollout_data_dir dump (input, output, gts, score, step: text, tokenized with --tokenizer).",
    `calls: ${CALLS_FORMAT} black-box call logs (docs/importers.md).`,
    "turns: an RL trainer's per-call records in token space (TRL/slime prompt_ids, output_ids, output_log_probs;",
    '  SkyRL prompt_ids, response_ids, rollout_logprobs, trajectory_ids, is_last_step; verl prompt_ids,',
    '  response_ids, response_logprobs), grouped by trajectory, ordered by step, one rollout per trajectory.',
    "--tokenizer (docs/tokenizers.md): byte (UTF-8 bytes, vocabulary 272: the workbench's own models) or gpt2",
    "  (GPT-2's BPE, vocabulary 50257: pretrained GPT-2 checkpoints). A rollout is scored only by a model of its",
    "  tokenizer's vocabulary. For calls logs it names the tokenizer of their text and ids; for turn dumps, of",
    '  their ids (kept as the trainer wrote them). A model folder (tokenizer.json, tokenizer_config.json: a Llama /',
    '  Qwen folder as the Hub publishes it, or hf:ORG/NAME[@REV]: its tokenizer files fetched from the Hub, docs/hub.md)',
    '  tokenizes every format of text (agent sessions, chats, Codex, Gemini,',
    "  OpenHands, verl) with the model's own tokenizer: a chat rendered whole by its chat template, every other",
    '  piece as the template writes one message of its role. The rollouts record "tokenizer": "hf:<name>" and hold',
    '  token ids. Turn dumps carry token ids already, kept as written: a model folder names them "hf:<name>"',
    "  (every id must lie in the model's vocabulary), so that model scores them and the views show its word pieces.",
    'What was imported, skipped (with line numbers and why) or not understood is printed on stderr and',
    "kept in each rollout's meta.import. OUT is written only when the whole import succeeds.",
  ].join('\n'),
  flags: {
    from: { type: 'string', value: 'FORMAT', help: `input format: ${FORMATS.join(', ')} (default auto)` },
    tokenizer: { type: 'string', value: 'T', help: `how text is tokenized: ${TOKENIZER_NAMES.join(', ')} or a MODEL-FOLDER (default ${DEFAULT_TOKENIZER})` },
    out: { type: 'string', value: 'OUT', help: 'the rollout JSONL file to write' },
  },
  async run(args, io) {
    const file = fileArgument(args);
    const from = args.flags.from ?? 'auto';
    if (typeof from !== 'string' || !FORMATS.includes(from)) {
      throw new UsageError(`unknown format ${quote(from)} (${FORMATS.join(', ')})`);
    }
    let flag = args.flags.tokenizer;
    // A model on the Hub: its config.json and tokenizer files fetched into the Hub cache, read as its folder.
    const hubName = typeof flag === 'string' && flag.startsWith('hf:') ? hubModelName(flag) : undefined;
    if (typeof flag === 'string' && flag.startsWith('hf:')) flag = await hubCheckpointArg(flag, io, 'import', { tokenizerOnly: true, flag: 'tokenizer' });
    // A built-in name, else a model folder (a directory) whose tokenizer.json the import uses.
    const isFolder = typeof flag === 'string' && !isTokenizerName(flag) && existsSync(flag) && (await stat(flag)).isDirectory();
    if (flag !== undefined && !isTokenizerName(flag) && !isFolder) {
      throw new UsageError(`unknown tokenizer ${quote(flag)} (${TOKENIZER_NAMES.join(', ')}, or a model folder with a tokenizer.json)`);
    }
    const hf = isFolder ? folderTokenizerFlag(flag as string, hubName) : null;
    const tokenizerFlag: TokenizerName | undefined = hf || flag === undefined ? undefined : (flag as TokenizerName);
    if (tokenizerFlag !== undefined) await loadTokenizer(tokenizerFlag);
    const out = args.flags.out;
    if (typeof out !== 'string' || out.length === 0) throw new UsageError('--out OUT.jsonl is required');
    if (resolve(out) === resolve(file)) throw new UsageError('--out must not be the input file');
    await checkOutputPath('out', out, [file]);
    try {
      if (!(await stat(file)).isFile()) throw new ValidationError({ file }, 'not a file');
    } catch (error) {
      if (error instanceof ValidationError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new ValidationError({ file }, code === 'ENOENT' ? 'no such file' : `cannot read file (${code ?? String(error)})`);
    }
    let row = from === 'auto' ? await detectRow(file) : rowNamed(from);
    if (from !== 'auto') {
      const refusal = wrongFormat(from, await sampleOf(file), { file });
      if (refusal) throw refusal;
    }
    // A model folder renders text through its chat template: every format of text (agent sessions, chats, Codex,
    // Gemini, OpenHands, verl). Turn dumps carry the trainer's token ids, kept as written: the folder names them
    // (`hf:<name>`, checked against its vocabulary), so the folder's model scores them and the views label them.
    if (hf && row.kind !== 'file') throw new UsageError(`--tokenizer MODEL-FOLDER applies to imports of text; ${file} is read by the core as it is`);
    let calls: JsonRecord[] | undefined; // read once: to tell a calls log by its records, and to import them
    if (row.name === 'rollout' && tokenizerFlag !== undefined) {
      // Calls logs are one of the formats the core reads; a tokenizer goes only with them.
      calls = await callsRecords(file);
      if (!calls) throw new UsageError(`--tokenizer applies to imports of text; ${file} is read by the core as it is`);
      row = rowNamed('calls');
    }
    // The same lines the app shows beside the summary (formatFileReport).
    const tokenizer = hf?.name ?? tokenizerFlag;
    if (row.kind === 'file' && row.name === 'agent-session') {
      // Event by event: a session's one rollout is never held whole.
      const report = await importAgentSessionFile(file, out, tokenizer ?? DEFAULT_TOKENIZER, hf);
      io.err(`${formatFileReport({ kind: 'records', report }, file)}\nwrote ${out}\n`);
    } else if (row.kind === 'file') {
      const report =
        row.name === 'turns'
          ? await importTurnsFile(file, out, hf ? { name: hf.name, vocab: hf.vocab } : tokenizerFlag)
          : await importRows(file, out, row, tokenizer, hf);
      io.err(`${formatFileReport(report, file)}\nwrote ${out}\n`);
    } else {
      const isCalls = row.name === 'calls';
      const n = await importWholeFile(file, out, isCalls ? 'calls' : 'rollout', tokenizerFlag, calls);
      io.err(`${formatFileReport({ kind: 'core', rollouts: n, ...(isCalls ? { format: CALLS_FORMAT } : {}) }, file)}\nwrote ${out}\n`);
    }
    return 0;
  },
};
