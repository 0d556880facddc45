// Helpers every command uses: flag parsing, loading a rollout file under the exit-2 contract,
// printing JSON, and small text tables.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ValidationError } from '../rollout/errors';
import { readRolloutFile, type RolloutFile } from '../rollout/parse';
import { UsageError, type CliIO, type Command, type ParsedArgs } from './command';

export function parseCommandArgs(command: Command, argv: string[]): ParsedArgs {
  const options: Record<string, { type: 'boolean' | 'string' }> = {};
  for (const [name, spec] of Object.entries(command.flags)) options[name] = { type: spec.type };
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return { positionals, flags: values as ParsedArgs['flags'] };
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message.split('\n')[0] : String(error));
  }
}

/** The one FILE positional of a command. */
export function fileArgument(args: ParsedArgs): string {
  if (args.positionals.length !== 1) {
    throw new UsageError(args.positionals.length === 0 ? 'missing FILE' : `expected one FILE, got ${args.positionals.length} arguments`);
  }
  return args.positionals[0];
}

/** Reads and validates a rollout file (any importable format); an unreadable file is invalid input too. */
export async function loadRolloutFile(file: string): Promise<RolloutFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ValidationError({ file }, code === 'ENOENT' ? 'no such file' : `cannot read file (${code ?? String(error)})`);
  }
  return readRolloutFile(text, file);
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
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
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
