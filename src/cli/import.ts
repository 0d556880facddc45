// `mw import FILE [--from FORMAT] --out OUT.jsonl`: converts a file of another format into v1
// rollouts (docs/importers.md). Agent-session logs and chat JSONL stream line by line (memory follows the
// record count, not the bytes); the output appears only when the import succeeded, written to a
// temporary file first. The import report goes to stderr.

import { createReadStream, existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { ValidationError, quote } from '../rollout/errors';
import { streamAgentSession } from '../rollout/importers/agentSession';
import { CALLS_FORMAT, importCalls } from '../rollout/importers/calls';
import { streamChat } from '../rollout/importers/chat';
import type { OpenSource } from '../rollout/importers/lines';
import { streamTurns, type TurnsSummary } from '../rollout/importers/turns';
import { findFileImporter, transcriptImporters } from '../rollout/importers/detect';
import type { FileImporter } from '../rollout/importers/types';
import { detectFileKind } from '../rollout/stream';
import { formatFileReport, type ImportReport } from '../rollout/importers/report';
import { readJsonRecords } from '../rollout/records';
import { stringifyRollout } from '../rollout/serialize';
import { DEFAULT_TOKENIZER, TOKENIZER_NAMES, isTokenizerName, loadTokenizer, loadTokenizers, registerTokenizer, tokenizerField, type TokenizerName } from '../rollout/tokenizer';
import { type HfTokenizer, materializeEvent } from '../rollout/tokenizer-hf';
import type { EventJson, RolloutJson } from '../rollout/format';
import { ModelFolderError } from '../model/family/folder';
import { loadFolderTokenizer } from '../model/family/folder-node';
import { validateRollout } from '../rollout/validate';
import { openPartial, type PartialFile } from '../util/output-file';
import { UsageError, type Command } from './command';
import { checkOutputPath, fileArgument, openRolloutFile } from './shared';

const FORMATS = ['auto', 'agent-session', 'chat', 'calls', 'turns', 'codex', 'gemini', 'openhands', 'verl'] as const;
type Format = (typeof FORMATS)[number];
/** What `auto` can pick; `rollout` is every other format the core reads (v1 itself, calls, ...). */
type Detected = Exclude<Format, 'auto'> | 'rollout';

/** The format, judged from the first records of the file (whole lines, however long). */
async function detectFormat(file: string): Promise<Detected> {
  const kind = await detectFileKind(() => createReadStream(file), file);
  if (kind === 'chat' || kind === 'agent-session' || kind === 'turns') return kind;
  if (kind === 'transcript' || kind === 'document') {
    // Transcripts are read whole anyway; a pretty-printed one is recognised from the whole document.
    const name = findFileImporter(await readFile(file, 'utf8'), file)?.name;
    const transcript = transcriptImporters.find((importer) => importer.name === name);
    if (transcript) return transcript.name as Detected;
  }
  return 'rollout';
}

/** A Codex, Gemini or OpenHands transcript or a verl text dump: read whole, imported strictly, each rollout validated, then written. */
async function importTranscriptFile(file: string, out: string, importer: FileImporter, tokenizer: TokenizerName) {
  const { rollouts, report } = importer.readText(await readFile(file, 'utf8'), file, { tokenizer });
  for (const { value, line } of rollouts) validateRollout(value, line === undefined ? { file } : { file, line });
  await writeAtomically(file, out, async (w) => {
    for (const { value } of rollouts) w.write(`${JSON.stringify(value)}\n`);
  });
  return report;
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
function folderTokenizerFlag(path: string): HfTokenizer {
  try {
    const tk = loadFolderTokenizer(path);
    registerTokenizer(tk);
    return tk;
  } catch (error) {
    if (error instanceof ModelFolderError) throw new ValidationError({ file: error.file === basename(resolve(path)) ? path : join(path, error.file) }, error.reason);
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

function importChatFile(file: string, out: string, tokenizer: string, hf: HfTokenizer | null): Promise<ImportReport> {
  return writeAtomically(file, out, (w) =>
    streamChat(
      () => createReadStream(file),
      (imported) => {
        const rollout: RolloutJson = hf ? { ...imported, events: imported.events.flatMap((e) => asTokens(e, hf)) } : imported;
        validateRollout(rollout, { file, line: (rollout.meta as { line: number }).line });
        w.write(`${JSON.stringify(rollout)}\n`);
      },
      { file, tokenizer },
    ),
  );
}

/** A trainer's turn records: read twice line by line (an index of trajectories, then each aligned as its turns arrive), validated and written one rollout at a time. */
async function importTurnsFile(file: string, out: string, tokenizer: TokenizerName | undefined): Promise<TurnsSummary> {
  return writeAtomically(file, out, (w) =>
    streamTurns(
      () => createReadStream(file),
      file,
      ({ value, line }) => {
        validateRollout(value, { file, line });
        w.write(`${JSON.stringify(value)}\n`);
      },
      { tokenizer },
    ),
  );
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
  usage: ['mw import FILE [--from FORMAT] [--tokenizer byte|gpt2|MODEL-FOLDER] --out OUT.jsonl'],
  details: [
    `FORMAT is one of ${FORMATS.join(', ')} (default auto: chosen from the first records of FILE).`,
    'agent-session: a coding agent CLI session log (user / assistant / system records, compactions,',
    '  microcompactions); the main conversation chain becomes one rollout, other branches are reported.',
    'chat: one {"messages": [...]} conversation per line, one rollout each.',
    'codex: a Codex CLI rollout-*.jsonl (session_meta, response_item, compacted, ...); each compacted item is an edit.',
    'gemini: a Gemini CLI session, the single JSON file or the JSONL recording; a rewritten message list is an edit.',
    'openhands: an OpenHands trajectory (a JSON array of action / observation events); each condensation is an edit.',
    'verl: verl\'s trainer.rollout_data_dir dump (input, output, gts, score, step: text, tokenized with --tokenizer).',
    `calls: ${CALLS_FORMAT} black-box call logs (docs/importers.md).`,
    'turns: an RL trainer\'s per-call records in token space (TRL/slime prompt_ids, output_ids, output_log_probs;',
    '  SkyRL prompt_ids, response_ids, rollout_logprobs, trajectory_ids, is_last_step; verl prompt_ids,',
    '  response_ids, response_logprobs), grouped by trajectory, ordered by step, one rollout per trajectory.',
    '--tokenizer (docs/tokenizers.md): byte (UTF-8 bytes, vocabulary 272: the workbench\'s own models) or gpt2',
    '  (GPT-2\'s BPE, vocabulary 50257: pretrained GPT-2 checkpoints). A rollout is scored only by a model of its',
    '  tokenizer\'s vocabulary. For calls logs it names the tokenizer of their text and ids; for turn dumps, of',
    '  their ids (kept as the trainer wrote them). A model folder (tokenizer.json, tokenizer_config.json: a Llama /',
    '  Qwen folder as the Hub publishes it) tokenizes agent sessions and chats with the model\'s own tokenizer, chats',
    '  rendered by its chat template; the rollouts record "tokenizer": "hf:<name>" and hold token ids.',
    'What was imported, skipped (with line numbers and why) or not understood is printed on stderr and',
    'kept in each rollout\'s meta.import. OUT is written only when the whole import succeeds.',
  ].join('\n'),
  flags: {
    from: { type: 'string', value: 'FORMAT', help: `input format: ${FORMATS.join(', ')} (default auto)` },
    tokenizer: { type: 'string', value: 'T', help: `how text is tokenized: ${TOKENIZER_NAMES.join(', ')} or a MODEL-FOLDER (default ${DEFAULT_TOKENIZER})` },
    out: { type: 'string', value: 'OUT', help: 'the rollout JSONL file to write' },
  },
  async run(args, io) {
    const file = fileArgument(args);
    const from = args.flags.from ?? 'auto';
    if (typeof from !== 'string' || !(FORMATS as readonly string[]).includes(from)) {
      throw new UsageError(`unknown format ${quote(from)} (${FORMATS.join(', ')})`);
    }
    const flag = args.flags.tokenizer;
    // A built-in name, else a model folder (a directory) whose tokenizer.json the import uses.
    const isFolder = typeof flag === 'string' && !isTokenizerName(flag) && existsSync(flag) && (await stat(flag)).isDirectory();
    if (flag !== undefined && !isTokenizerName(flag) && !isFolder) {
      throw new UsageError(`unknown tokenizer ${quote(flag)} (${TOKENIZER_NAMES.join(', ')}, or a model folder with a tokenizer.json)`);
    }
    const hf = isFolder ? folderTokenizerFlag(flag as string) : null;
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
    let format: Detected = from === 'auto' ? await detectFormat(file) : (from as Detected);
    if (hf && format !== 'agent-session' && format !== 'chat') {
      throw new UsageError(`--tokenizer MODEL-FOLDER applies to agent-session and chat imports; ${file} is ${format === 'rollout' ? 'read by the core as it is' : `a ${format} file`}`);
    }
    if (format === 'rollout' && tokenizerFlag !== undefined) {
      // Calls logs are one of the formats the core reads; a tokenizer goes only with them.
      if (!(await isCallsFile(file))) throw new UsageError(`--tokenizer applies to agent-session, chat and calls imports; ${file} is read by the core as it is`);
      format = 'calls';
    }
    const transcript = transcriptImporters.find((importer) => importer.name === format);
    if (transcript) {
      const report = await importTranscriptFile(file, out, transcript, tokenizerFlag ?? DEFAULT_TOKENIZER);
      io.err(`${formatFileReport(report, file)}\nwrote ${out}\n`);
    } else if (format === 'turns') {
      const { trajectories, records, convention, unused } = await importTurnsFile(file, out, tokenizerFlag);
      io.err(`${formatFileReport({ kind: 'turns', convention, records, rollouts: trajectories, unused }, file)}\nwrote ${out}\n`);
    } else if (format === 'agent-session' || format === 'chat') {
      // The same lines the app shows beside the summary (formatFileReport).
      const tokenizer = hf?.name ?? tokenizerFlag ?? DEFAULT_TOKENIZER;
      const report = format === 'agent-session' ? await importAgentSessionFile(file, out, tokenizer, hf) : await importChatFile(file, out, tokenizer, hf);
      io.err(`${formatFileReport({ kind: 'records', report }, file)}\nwrote ${out}\n`);
    } else {
      const n = await importWholeFile(file, out, format as 'calls' | 'rollout', tokenizerFlag);
      io.err(`${formatFileReport({ kind: 'core', rollouts: n, ...(format === 'calls' ? { format: CALLS_FORMAT } : {}) }, file)}\nwrote ${out}\n`);
    }
    return 0;
  },
};
