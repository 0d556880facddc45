// Progress of a long GPU run on stderr: tokens done out of the total, the rate and an ETA. Shown
// when stderr is a terminal (one line rewritten in place) or when asked (`--progress`: a line every
// few seconds and a last one), so a script's stderr holds only its one-line errors otherwise.

import type { CliIO } from './command';

/** Seconds between lines when stderr is not a terminal. */
const EVERY_SECONDS = 5;

/** "42s", "3m05s", "1h02m": every command's elapsed times and ETAs. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export interface Progress {
  /** `done` of `total` tokens, while working on `what`. */
  update(done: number, total: number, what: string): void;
}

export function createProgress(io: CliIO, command: string, options: { tty: boolean; asked: boolean }): Progress | undefined {
  if (!options.tty && !options.asked) return undefined;
  const started = performance.now();
  let lastLine = -Infinity;
  return {
    update(done, total, what) {
      const seconds = (performance.now() - started) / 1000;
      const finished = done >= total;
      const rate = done / Math.max(seconds, 1e-9);
      const line = finished
        ? `mw ${command}: ${done}/${total} tokens scored in ${duration(seconds)}, ${rate.toFixed(0)} tokens/s`
        : `mw ${command}: ${done}/${total} tokens scored (${what}), ${rate.toFixed(0)} tokens/s, ETA ${duration((total - done) / rate)}`;
      if (options.tty) io.err(`\r${line}\x1b[K${finished ? '\n' : ''}`);
      else if (finished || seconds - lastLine >= EVERY_SECONDS) {
        io.err(`${line}\n`);
        lastLine = seconds;
      }
    },
  };
}
