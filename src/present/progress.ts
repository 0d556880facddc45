// How a long run tells people how far it got: the one duration format ("42s", "3m05s", "1h02m") of
// the app, the CLI and the experiment reports, and the one progress printer of the CLI's commands
// (one line rewritten in place on a terminal; otherwise a line when due, and always the last one).

/** "42s", "3m05s", "1h02m": every elapsed time and ETA; "?" for a time not known. */
export function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** Where a run is, for its line: `done` of `total` units after `elapsed` seconds, and the ETA at the rate so far. */
export interface ProgressTick {
  done: number;
  total: number;
  elapsed: number;
  /** Units per second so far. */
  rate: number;
  /** The time left at that rate, as `duration` writes it. */
  eta: string;
}

export interface ProgressOptions {
  /** The output is a terminal: one line rewritten in place. */
  tty: boolean;
  /** Off a terminal, whether this tick's line is written (the last one always is); default: one every 5 s. */
  due?: (tick: ProgressTick, sinceLast: number) => boolean;
}

/** Seconds between lines off a terminal, by default. */
const EVERY_SECONDS = 5;

/** A progress printer: call it with each tick's `done` and `total` and the line to show for it. */
export function createProgress(write: (text: string) => void, options: ProgressOptions) {
  const started = performance.now();
  let lastLine = -Infinity;
  const due = options.due ?? ((_tick: ProgressTick, sinceLast: number) => sinceLast >= EVERY_SECONDS);
  return (done: number, total: number, line: (tick: ProgressTick) => string): void => {
    const elapsed = (performance.now() - started) / 1000;
    const rate = done / Math.max(elapsed, 1e-9);
    const tick = { done, total, elapsed, rate, eta: duration(done > 0 ? ((total - done) * elapsed) / done : Number.NaN) };
    const finished = done >= total;
    if (options.tty) write(`\r${line(tick)}\x1b[K${finished ? '\n' : ''}`);
    else if (finished || due(tick, elapsed - lastLine)) {
      write(`${line(tick)}\n`);
      lastLine = elapsed;
    }
  };
}

/** Off a terminal: a line every tenth of the total. */
export const everyTenth = ({ done, total }: ProgressTick) => done % Math.max(1, Math.ceil(total / 10)) === 0;
