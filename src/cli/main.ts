// The `mw` command line: a registry of commands (one file each) and main(), which maps errors to
// exit codes: 0 ok, 1 usage, 2 invalid input (one line `FILE[:LINE]: event N: reason` on stderr,
// nothing on stdout; also a disk that is full), 70 internal error. Every error is exactly one line on stderr.

import { ValidationError, escapeControls } from '../rollout/errors';
import { OutputIOError, OutputRefusedError } from '../util/output-file';
import { UsageError, type CliIO, type Command } from './command';
import { driftCommand } from './drift';
import { experimentCommand } from './experiment';
import { exportCommand } from './export';
import { generateCommand } from './generate';
import { importCommand } from './import';
import { planCommand } from './plan';
import { scoreCommand } from './score';
import { parseCommandArgs } from './shared';
import { trainCommand } from './train';
import { treeCommand } from './tree';
import { verifyCommand } from './verify';

/** Every command, in the order `mw --help` lists them. Adding a command is one line here. */
export const commands: readonly Command[] = [
  treeCommand,
  planCommand,
  exportCommand,
  importCommand,
  scoreCommand,
  verifyCommand,
  trainCommand,
  driftCommand,
  generateCommand,
  experimentCommand,
];

const processIO: CliIO = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  drain: () => drainStdout(),
};

/** Waits while stdout's buffer is full (a pipe to a slow reader); a closed stdout stops the wait too. */
function drainStdout(): Promise<void> {
  const stdout = process.stdout;
  if (!stdout.writableNeedDrain) return Promise.resolve();
  return new Promise((done) => {
    const finish = () => {
      stdout.off('drain', finish).off('close', finish).off('error', finish);
      done();
    };
    stdout.on('drain', finish).on('close', finish).on('error', finish);
  });
}

export function mainUsage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'usage: mw <command> [options]',
    '',
    'commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run 'mw <command> --help' for a command's options.",
    '',
  ].join('\n');
}

export function commandUsage(command: Command): string {
  const flags = Object.entries(command.flags).map(([name, spec]) => {
    const head = spec.type === 'string' ? `--${name} ${spec.value ?? 'VALUE'}` : `--${name}`;
    return [head, spec.help] as const;
  });
  const width = Math.max(0, ...flags.map(([head]) => head.length));
  return [
    ...command.usage.map((u, i) => (i === 0 ? `usage: ${u}` : `       ${u}`)),
    '',
    command.summary,
    '',
    'options:',
    ...flags.map(([head, help]) => `  ${head.padEnd(width)}  ${help}`),
    `  ${'--help'.padEnd(width)}  print this help`,
    ...(command.details ? ['', command.details] : []),
    '',
  ].join('\n');
}

/** Every error is one line on stderr: line breaks (a file name can hold one) are escaped. */
function oneLine(message: string): string {
  return escapeControls(message);
}

export async function main(argv: string[], io: CliIO = processIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.err(mainUsage());
    return 1;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const command = commands.find((c) => c.name === rest[0]);
    io.out(command ? commandUsage(command) : mainUsage());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.err(`mw: unknown command "${name}"\n${mainUsage()}`);
    return 1;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(commandUsage(command));
    return 0;
  }
  try {
    return await command.run(parseCommandArgs(command, rest), io);
  } catch (error) {
    if (error instanceof ValidationError) {
      io.err(`${error.message}\n`);
      return 2;
    }
    if (error instanceof OutputIOError) {
      // The disk, not the input or the program: a full disk or quota names the file (the old one is kept).
      io.err(`${oneLine(error.message)}\n`);
      return 2;
    }
    if (error instanceof OutputRefusedError) {
      io.err(`mw ${command.name}: ${oneLine(`${error.file} ${error.reason}`)}\n`);
      return 1;
    }
    if (error instanceof UsageError) {
      io.err(`mw ${command.name}: ${oneLine(error.message)} (see 'mw ${command.name} --help')\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.err(`mw ${command.name}: internal error: ${oneLine(message)}\n`);
    if (process.env.MW_DEBUG && error instanceof Error && error.stack) io.err(`${error.stack}\n`);
    return 70;
  }
}
