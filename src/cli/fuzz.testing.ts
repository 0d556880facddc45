// The harness of the `mw` fuzz tests (src/cli/fuzz-*.test.ts), one family a file: hostile inputs run as
// a user runs them (a subprocess per case). Every refusal exits 2 (1 for a usage error) with exactly
// one line on stderr, no stack trace, nothing on stdout, within 30 s and 500 MB; every accepted file
// gives the output it would give without the hostile part. Each test file has its own TMP and makes
// the files it reads itself, so a family runs alone (-t) as well as with the others.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { saveCheckpoint } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { initWeights, parameterShapes } from '../model/params';
import { writeSafetensors } from '../util/safetensors';
import { ROOT, tmpDir, WORKED } from './subprocess.testing';

export const TMP = tmpDir('fuzz');
const MEASURED = join(ROOT, 'src/cli/measured.testing.ts');
export const TINY: ModelConfig = { vocabSize: 272, nEmbd: 8, nLayer: 1, nHead: 2, nPositions: 16 };
const LIMIT_MS = 30_000;
const LIMIT_KB = 500 * 1024;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
  maxRssKB: number;
}

let runs = 0;
export function mw(args: string[]): Promise<Outcome> {
  const rssFile = join(TMP, `rss-${runs++}`);
  const started = Date.now();
  return new Promise((resolve) => {
    // npm test's bundle (scripts/cli-bundle.mjs) writes MW_RSS_FILE as measured.testing.ts does.
    const entry = process.env.MW_CLI ? [process.env.MW_CLI] : ['--import', './scripts/register.mjs', MEASURED];
    const child = spawn(process.execPath, [...entry, ...args], {
      cwd: ROOT,
      env: { ...process.env, MW_RSS_FILE: rssFile, MW_DEBUG: '' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    // Past the limit: SIGTERM (the command removes its partial files and exits 143), SIGKILL 3 s later.
    let kill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    }, LIMIT_MS + 5000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearTimeout(kill);
      let maxRssKB = Infinity;
      try {
        maxRssKB = Number(readFileSync(rssFile, 'utf8'));
      } catch {
        // killed before it could write
      }
      resolve({ code: code ?? -1, stdout, stderr, ms: Date.now() - started, maxRssKB });
    });
  });
}

export function file(name: string, content: string | Uint8Array): string {
  const path = join(TMP, name);
  writeFileSync(path, content);
  return path;
}

/** A folder in TMP, given as --out or as a FILE; the fuzz tests check that nothing is written into it. */
export function aFolder(): string {
  const folder = join(TMP, 'a-folder');
  mkdirSync(folder, { recursive: true });
  return folder;
}

export const worked = () => JSON.parse(readFileSync(WORKED, 'utf8')) as Record<string, unknown>;
export const deepArray = (depth: number) => `${'['.repeat(depth)}0${']'.repeat(depth)}`;
export const deepObject = (depth: number) => `${'{"k":'.repeat(depth)}0${'}'.repeat(depth)}`;
/** A rollout's JSON text with an array nested `depth` deep as its first event. */
export const withDeepEvent = (text: string, depth: number) => text.replace(/"events":\[/, `"events":[${deepArray(depth)},`);

export interface Case {
  family: string;
  args: string[];
  /** Exit status the contract gives this input. */
  code: 0 | 1 | 2;
  /** A refusal's stderr line must match this. */
  line?: RegExp;
  /** For exit 0: what stdout must equal (the output of the same input without the hostile part). */
  same?: string[];
}

/** A checkpoint of TINY's weights whose metadata claims another config (one out of bounds for the kernels). */
export function absurdCheckpoint(name: string, claim: Partial<ModelConfig>): string {
  const tiny = initWeights(TINY, 3);
  const c = { ...TINY, ...claim };
  const meta = { vocab_size: `${c.vocabSize}`, n_embd: `${c.nEmbd}`, n_layer: `${c.nLayer}`, n_head: `${c.nHead}`, n_positions: `${c.nPositions}` };
  return file(
    `absurd-${name}.safetensors`,
    writeSafetensors(
      parameterShapes(TINY).map(({ name: n, shape }) => ({ name: n, shape, data: tiny.tensors.get(n)! })),
      meta,
    ),
  );
}

/** A checkpoint whose token embedding holds a NaN, read by the train and experiment families. */
export function nanWeightsFile(): string {
  const w = initWeights(TINY, 2);
  w.tensors.get('wte.weight')![0] = NaN;
  return file('nan-wte.safetensors', saveCheckpoint(w));
}

async function inPool<T, R>(items: readonly T[], width: number, f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await f(items[i]);
      }
    }),
  );
  return out;
}

/**
 * One family's tests: every case run (two at a time) and checked against the contract, then the
 * family's leftovers: no .partial, nothing in a-folder, and no file that `refusedOutput` names (the
 * outputs of refused commands).
 */
export function fuzzFamily(name: string, generate: () => Case[], refusedOutput?: (file: string) => boolean): void {
  describe(`mw under hostile input: ${name}`, () => {
    it('every bad input refused with its exit code and one stderr line, in 30 s and 500 MB; the rest accepted unchanged', async () => {
      const cases = generate();
      const outcomes = await inPool(cases, 2, (c) => mw(c.args));
      const expected = await inPool(
        cases.filter((c) => c.same),
        2,
        (c) => mw(c.same!),
      );
      let e = 0;
      const failures: string[] = [];
      cases.forEach((c, i) => {
        const o = outcomes[i];
        const what = `${c.family}: mw ${c.args.map((a) => (a.length > 60 ? `${a.slice(0, 57)}...` : a)).join(' ')}`;
        const check = (ok: boolean, why: string) => ok || failures.push(`${what}: ${why} (exit ${o.code}, stderr ${JSON.stringify(o.stderr.slice(0, 300))})`);
        check(o.code === c.code, `exit ${o.code}, expected ${c.code}`);
        check(!/\n\s+at /.test(o.stderr), 'a stack trace');
        check(o.ms < LIMIT_MS, `${o.ms} ms`);
        check(o.maxRssKB < LIMIT_KB, `peak RSS ${Math.round(o.maxRssKB / 1024)} MB`);
        if (c.code !== 0) {
          check(o.stdout === '', 'output on stdout');
          check(o.stderr.endsWith('\n') && o.stderr.indexOf('\n') === o.stderr.length - 1, 'not exactly one stderr line');
          if (c.line) check(c.line.test(o.stderr.trimEnd()), `line does not match ${c.line}`);
        }
        if (c.same) check(o.stdout === expected[e++].stdout, 'output differs from the same input without the hostile part');
      });
      const worst = outcomes.reduce((w, o) => ({ ms: Math.max(w.ms, o.ms), kb: Math.max(w.kb, o.maxRssKB) }), { ms: 0, kb: 0 });
      console.log(`${cases.length} hostile cases: slowest ${worst.ms} ms, largest peak RSS ${Math.round(worst.kb / 1024)} MB`);
      for (const [i, c] of cases.entries()) console.log(`  ${c.family}: exit ${outcomes[i].code} ${outcomes[i].stderr.trimEnd().slice(0, 140)}`);
      expect(failures).toEqual([]);
    }, 400_000);

    it('leaves no output behind: no .partial, nothing in a folder named as --out, no output of a refused command', () => {
      expect(readdirSync(TMP).filter((f) => f.endsWith('.partial'))).toEqual([]);
      if (existsSync(join(TMP, 'a-folder'))) expect(readdirSync(join(TMP, 'a-folder'))).toEqual([]);
      if (refusedOutput) expect(readdirSync(TMP).filter(refusedOutput)).toEqual([]);
    });
  });
}
