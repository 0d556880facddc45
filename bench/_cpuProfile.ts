// Reading a V8 CPU profile (the CDP Profiler domain's `Profile`): time per function, self and total,
// with the production build's minified positions mapped back to the source through its source maps.
// Used by bench/browser-train.ts --profile; pure functions over the profile object, tested in Node.
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of CDP's Profiler.Profile this reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }[];
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds between a sample and the one before it. */
  timeDeltas: number[];
}

export interface FunctionTime {
  /** `name (file:line)`: mapped to the source where a source map knows the position. */
  key: string;
  selfMs: number;
  totalMs: number;
}

export interface ProfileSummary {
  /** Sampled time, milliseconds. */
  spanMs: number;
  idleMs: number;
  /** Everything but idle: JavaScript, garbage collection, and the engine's own work ("(program)": style, layout, paint, IPC). */
  busyMs: number;
  functions: FunctionTime[];
}

/** The V8 pseudo-frames that are not functions of the page. */
const IDLE = '(idle)';

/** Names a call frame; `locate` maps a generated position (0-based line and column) to the source. */
export type Locate = (url: string, line: number, column: number) => string | null;

/**
 * Self and total time per function. Each sample's time is the delta to the next sample (the
 * interval during which that stack was on the CPU); a function is counted once per sample in
 * its total however often it recurses.
 */
export function summarizeProfile(profile: CpuProfile, locate: Locate = () => null): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = new Map<number, string>();
  const key = (id: number): string => {
    let k = keyOf.get(id);
    if (k === undefined) {
      const f = byId.get(id)!.callFrame;
      const name = f.functionName || '(anonymous)';
      const where = f.url ? (locate(f.url, f.lineNumber, f.columnNumber) ?? `${basename(f.url)}:${f.lineNumber + 1}`) : null;
      k = where ? `${name} (${where})` : name;
      keyOf.set(id, k);
    }
    return k;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let spanUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    spanUs += us;
    const leaf = profile.samples[i];
    const k = key(leaf);
    if (k === IDLE) {
      idleUs += us;
      continue;
    }
    self.set(k, (self.get(k) ?? 0) + us);
    const seen = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const name = key(id);
      if (seen.has(name) || name === '(root)') continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + us);
    }
  }
  const functions = [...total].map(([k, t]) => ({ key: k, selfMs: (self.get(k) ?? 0) / 1000, totalMs: t / 1000 }));
  return { spanMs: spanUs / 1000, idleMs: idleUs / 1000, busyMs: (spanUs - idleUs) / 1000, functions };
}

/**
 * Maps positions in the built scripts (served from `root`) to `src/file.ts:line` (relative to the
 * working directory), through the `.map` files Vite writes beside them; null where there is no map.
 */
export function sourceMapLocator(root: string): Locate {
  const maps = new Map<string, SourceMap | null>();
  return (url, line, column) => {
    const file = basename(new URL(url).pathname);
    if (!maps.has(file)) {
      const path = join(root, 'assets', `${file}.map`);
      maps.set(file, existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : null);
    }
    const entry = maps.get(file)?.findEntry(line, column);
    if (!entry || !('originalSource' in entry) || !entry.originalSource) return null;
    const original = entry.originalSource.startsWith('file:') ? fileURLToPath(entry.originalSource) : resolve(root, 'assets', entry.originalSource);
    return `${relative(process.cwd(), original)}:${entry.originalLine + 1}`;
  };
}
