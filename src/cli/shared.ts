// Helpers every command uses: flag parsing, reading a rollout file under the exit-2 contract (one
// rollout at a time, or whole), printing JSON (streamed per rollout), and small text tables.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { dirname } from 'node:path';
import { ValidationError, quote } from '../rollout/errors';
import type { OpenSource } from '../rollout/importers/lines';
import type { RolloutFile } from '../rollout/parse';
import type { FileLayout } from '../rollout/records';
import type { Rollout } from '../rollout/rollout';
import { openRolloutStream, type RolloutStream } from '../rollout/stream';
import { outputProblem } from '../util/output-file';
import { DEFAULT_MAX_PACKED, packedProblem, sizeProblem } from '../plan/size';
import type { Method } from '../plan/types';
import { UsageError, type CliIO, type Command, type FlagSpec, type ParsedArgs } from './command';

export function parseCommandArgs(command: Command, argv: string[]): ParsedArgs {
  const options: Record<string, { type: 'boolean' | 'string' }> = {};
  for (const [name, spec] of Object.entries(command.flags)) options[name] = { type: spec.type };
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { positionals, flags: values as ParsedArgs['flags'] };
  } catch (error) {
    // One line, hint included (a value starting with '-' is written --flag=-1).
    throw new UsageError(error instanceof Error ? error.message.replace(/\s*\n\s*/g, ' ') : String(error));
  }
}

/**
 * An output path a command may write (a usage error otherwise, exit 1, before any work): its folder
 * exists, and it is absent or a regular file that is none of `inputs` under any name (src/util/output-file.ts).
 * Checked first, so no temporary file is left behind either.
 */
export async function checkOutputPath(flag: string, path: string, inputs: readonly string[] = []): Promise<void> {
  const folder = dirname(path);
  if ((await stat(folder).catch(() => null))?.isDirectory() !== true)
    throw new UsageError(`--${flag} ${JSON.stringify(path)}: folder ${JSON.stringify(folder)} does not exist`);
  const problem = outputProblem(path, inputs);
  if (problem) throw new UsageError(`--${flag} ${JSON.stringify(path)} ${problem}`);
}

/** `--max-packed N`: the most rows one rollout's tree or plan may have (src/plan/size.ts). */
export const MAX_PACKED_FLAG: FlagSpec = {
  type: 'string',
  value: 'N',
  help: `most rows of one rollout's tree (N_packed) or plan; a larger rollout is refused before it is built (default ${DEFAULT_MAX_PACKED})`,
};

export function maxPackedFlag(args: ParsedArgs): number {
  const text = args.flags['max-packed'];
  if (text === undefined) return DEFAULT_MAX_PACKED;
  const value = Number(text);
  if (typeof text !== 'string' || !/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`--max-packed must be an integer ≥ 1, got ${quote(text)}`);
  }
  return value;
}

const RAISE_MAX_PACKED = '--max-packed N allows more';

/** Refuses (invalid input, naming the figure and the limit) a rollout whose tree or `method`'s plan exceeds `limit` rows. */
export function checkSize(rollout: Rollout, limit: number, method?: Method): void {
  const problem = sizeProblem(rollout, limit, method, RAISE_MAX_PACKED);
  if (problem) throw new ValidationError(rollout.source, problem);
}

/** checkSize of the tree alone when N_packed is already counted (the figures hold it): no second replay of the events. */
export function checkPackedSize(rollout: Rollout, nPacked: number, limit: number): void {
  const problem = packedProblem(rollout.id, nPacked, limit, RAISE_MAX_PACKED);
  if (problem) throw new ValidationError(rollout.source, problem);
}

/** The one FILE positional of a command. */
export function fileArgument(args: ParsedArgs): string {
  if (args.positionals.length !== 1) {
    throw new UsageError(args.positionals.length === 0 ? 'missing FILE' : `expected one FILE, got ${args.positionals.length} arguments`);
  }
  return args.positionals[0];
}

/** The file's bytes, opened once per pass; a missing, unreadable or non-regular file is invalid input. */
async function fileSource(file: string): Promise<OpenSource> {
  try {
    if (!(await stat(file)).isFile()) throw new ValidationError({ file }, 'not a file');
  } catch (error) {
    throw unreadable(file, error);
  }
  return () =>
    (async function* () {
      try {
        yield* createReadStream(file, { highWaterMark: 1 << 20 });
      } catch (error) {
        throw unreadable(file, error);
      }
    })();
}

function unreadable(file: string, error: unknown): ValidationError {
  if (error instanceof ValidationError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  return new ValidationError({ file }, code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'not a file' : `cannot read file (${code ?? String(error)})`);
}

/** A rollout file (any importable format) read one rollout at a time (src/rollout/stream.ts). */
export async function openRolloutFile(file: string): Promise<RolloutStream> {
  return openRolloutStream(await fileSource(file), file);
}

/** Reads and validates a whole rollout file into memory (commands that need every rollout at once). */
export async function loadRolloutFile(file: string): Promise<RolloutFile> {
  const stream = await openRolloutFile(file);
  const rollouts: Rollout[] = [];
  for await (const rollout of stream.rollouts()) rollouts.push(rollout);
  return { layout: stream.layout, rollouts };
}

/**
 * Validates every rollout of a JSONL file (one at a time, nothing kept) before a command prints
 * anything: output streamed per rollout must not start for a file whose line 900 is invalid (or,
 * with `size`, too large to build).
 */
export async function validateRolloutFile(stream: RolloutStream, size?: { limit: number; method?: Method }): Promise<void> {
  if (stream.layout === 'json' && !size) return;
  for await (const rollout of stream.rollouts()) if (size) checkSize(rollout, size.limit, size.method);
}

/**
 * The rollouts in file order, grouped so that each group's `weight` adds up to at most `budget`
 * (a heavier rollout stands alone): GPU commands score a group per pass, memory bounded by it.
 */
export async function* rolloutGroups(rollouts: AsyncIterable<Rollout>, weight: (r: Rollout) => number, budget: number): AsyncGenerator<Rollout[]> {
  let group: Rollout[] = [];
  let total = 0;
  for await (const rollout of rollouts) {
    const w = weight(rollout);
    if (group.length > 0 && total + w > budget) {
      yield group;
      group = [];
      total = 0;
    }
    group.push(rollout);
    total += w;
  }
  if (group.length > 0) yield group;
}

/**
 * Output that is one JSON value per rollout, streamed: a .json file prints its one value, JSONL an
 * array in file order, exactly the text JSON.stringify would make of it, written as it comes.
 */
export function createJsonOutput(io: CliIO, layout: FileLayout) {
  let count = 0;
  return {
    /** One rollout's value as JSON text (or written through `writeValue` in pieces). */
    async item(writeValue: (write: (text: string) => Promise<void>) => Promise<void>) {
      if (layout === 'jsonl') io.out(count === 0 ? '[' : ',');
      count++;
      await writeValue(async (text) => {
        io.out(text);
        await io.drain?.();
      });
    },
    finish() {
      io.out(layout === 'jsonl' ? (count === 0 ? '[]\n' : ']\n') : '\n');
    },
  };
}

/** One value per rollout: an object for a single JSON document, an array (file order) for JSONL. */
export function perFile<T>(file: RolloutFile, values: T[]): T | T[] {
  return file.layout === 'jsonl' ? values : values[0];
}

export function printJson(io: CliIO, value: unknown): void {
  io.out(`${JSON.stringify(value)}\n`);
}

/** A left-aligned text table; numbers are right-aligned. */
export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map(String))];
  // A loop, not Math.max(...): a data set's table may have more rows than a call has arguments.
  const widths = headers.map((_, c) => cells.reduce((w, r) => Math.max(w, (r[c] ?? '').length), 0));
  const numeric = headers.map((_, c) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number'));
  return (
    cells
      .map((r) =>
        r
          .map((cell, c) => (numeric[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** Ids as compact runs, e.g. "0-1 9-10 7-8", cut to `max` characters. */
export function formatIds(ids: ArrayLike<number> | null, max = 48): string {
  if (ids === null) return '-';
  const parts: string[] = [];
  for (let i = 0; i < ids.length; ) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    parts.push(j === i ? `${ids[i]}` : `${ids[i]}-${ids[j]}`);
    i = j + 1;
  }
  const text = parts.join(' ');
  return text.length > max ? `${text.slice(0, max - 3)}...` : text || '(empty)';
}
