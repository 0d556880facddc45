// What a `mw` command is: a name, its help, its flags and a run function. Commands are thin:
// parse flags, call the layers above, print. Errors are thrown, and main() turns them into
// exit codes (usage 1, invalid input 2).

export interface CliIO {
  out(text: string): void;
  err(text: string): void;
  /** Resolves once written output has been taken (stdout to a slow pipe), so streamed output stays bounded. */
  drain?(): Promise<void>;
}

export interface FlagSpec {
  type: 'boolean' | 'string';
  help: string;
  /** The name shown for a string flag's value in help, e.g. 'M' in `--method M`. */
  value?: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | undefined>;
}

export interface Command {
  name: string;
  /** One line for `mw --help`. */
  summary: string;
  /** Synopsis lines for `mw <cmd> --help`, e.g. 'mw tree FILE [--json] [--per-target]'. */
  usage: string[];
  /** Extra help text printed after the flags. */
  details?: string;
  flags: Record<string, FlagSpec>;
  run(args: ParsedArgs, io: CliIO): Promise<number> | number;
}

/** A mistake in the command line itself (exit 1). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
