// The `mw` contract of docs/cli.md, run as a user runs it: `node bin/mw.js ...` in a subprocess (under
// `npm test`, the bundle of the same main it builds, MW_ENTRY, ~1 s less CPU a start; the first test runs
// bin/mw.js itself and the bundle side by side).

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { WORKED_EXAMPLE_FIGURES } from '../testing/fixtures';
import { ROLLOUT_ROW_FIELDS } from '../tree/rolloutRow';
import { MW_ENTRY } from './subprocess.testing';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const WORKED = join(FIXTURES, 'worked-example.json');
const CALLS = join(FIXTURES, 'calls-example.json');
const TMP = mkdtempSync(join(tmpdir(), 'mw-cli-'));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function mw(...args: string[]): Promise<Run> {
  return runEntry(MW_ENTRY, args);
}

function runEntry(entry: string, args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [entry, ...args], { cwd: ROOT, maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

function tmpFile(name: string, text: string): string {
  const path = join(TMP, name);
  writeFileSync(path, text);
  return path;
}

describe('mw tree', () => {
  it("prints the worked example figures as one JSON object: id, figures, reward (bin/mw.js, as the test run's mw prints them)", async () => {
    const [run, entry] = await Promise.all([runEntry('bin/mw.js', ['tree', WORKED, '--json']), mw('tree', WORKED, '--json')]);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(entry).toEqual(run);
    const row = JSON.parse(run.stdout);
    expect(row).toEqual({ id: 'worked-example', ...WORKED_EXAMPLE_FIGURES, reward: 1 });
    expect(Object.keys(row)).toEqual([...ROLLOUT_ROW_FIELDS]);
  });

  it('prints per-target text: each branch spelled once, each target naming its prefixes by length', async () => {
    const run = await mw('tree', WORKED, '--per-target');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.slice(4, 7)).toEqual(['branch 0: 0-8', 'branch 1: 0-1 9-10 7-8 11-14', 'branch 2 (final walk): 0-1 9-10 13-16']);
    expect(lines.find((l) => /^\s+13\s/.test(l))!.split(/\s{2,}/)).toEqual(['', '13', '1', '8 of branch 1', '4 of branch 2', '4', 'yes']);
    expect(lines.find((l) => /^\s+2\s/.test(l))!.split(/\s{2,}/)).toEqual(['', '2', '0', '2 of branch 0', 'dropped', '-']);
  });

  it('adds perTarget with --per-target, and prints an array for JSONL', async () => {
    const jsonl = tmpFile('two.jsonl', `${JSON.stringify(JSON.parse(readFileSync(WORKED, 'utf8')))}\n${readFileSync(CALLS, 'utf8').replace(/\n\s*/g, ' ')}\n`);
    const run = await mw('tree', jsonl, '--json', '--per-target');
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout);
    expect(out).toHaveLength(2);
    expect(out[0]).toMatchObject(WORKED_EXAMPLE_FIGURES);
    // Each branch spelled once as [first, end) ranges; a target names its prefixes by their length in one.
    expect(out[0].branchViews).toEqual([
      [[0, 9]],
      [
        [0, 2],
        [9, 11],
        [7, 9],
        [11, 15],
      ],
      [
        [0, 2],
        [9, 11],
        [13, 17],
      ],
    ]);
    expect(out[0].perTarget[4]).toEqual({ id: 13, segment: 1, livePrefix: 8, finalPrefix: 4, evictionMass: 4, diverging: true });
    expect(out[0].perTarget[0]).toEqual({ id: 2, segment: 0, livePrefix: 2, finalPrefix: null, evictionMass: null, diverging: false });
    // The lengths name exactly the tree's prefixes: 13's live prefix 0 1 9 10 7 8 11 12, its final prefix 0 1 9 10.
    const ids = (ranges: [number, number][], n: number) => ranges.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i)).slice(0, n);
    expect(ids(out[0].branchViews[1], out[0].perTarget[4].livePrefix)).toEqual([0, 1, 9, 10, 7, 8, 11, 12]);
    expect(ids(out[0].branchViews[2], out[0].perTarget[4].finalPrefix)).toEqual([0, 1, 9, 10]);
    expect(out[1]).toMatchObject({ id: 'calls-example', K: 1, packedLength: 14, divergingLeaves: 1, evictionMassTotal: 5 });
    // Without --per-target: the same rows, without perTarget (the app's data-set table and CSV).
    const rows = JSON.parse((await mw('tree', jsonl, '--json')).stdout);
    expect(rows).toEqual(out.map(({ perTarget: _, branchViews: __, ...row }: { perTarget: unknown; branchViews: unknown }) => row));
    expect(Object.keys(rows[1])).toEqual([...ROLLOUT_ROW_FIELDS]);
  });

  it('prints a readable table by default', async () => {
    const run = await mw('tree', WORKED);
    expect(run.code).toBe(0);
    const [header, row] = run.stdout.trim().split('\n');
    expect(header.split(/\s+/)).toEqual(['rollout', ...Object.keys(WORKED_EXAMPLE_FIGURES)]);
    expect(row.split(/\s+/)).toEqual(['worked-example', '2', '3', '17', '8', '21', '8', '4', '2', '8', '4']);
  });
});

describe('mw plan', () => {
  it('prints the packed-4d plan of the worked example as docs/cli.md JSON', async () => {
    const run = await mw('plan', WORKED, '--method', 'packed-4d', '--json');
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      method: 'packed-4d',
      sequences: [
        {
          ids: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 7, 8, 11, 12, 13, 14, 13, 14, 15, 16],
          positions: [0, 1, 2, 3, 4, 5, 6, 7, 8, 2, 3, 4, 5, 6, 7, 8, 9, 4, 5, 6, 7],
          end: [21, 21, 9, 9, 9, 9, 9, 9, 9, 21, 21, 17, 17, 17, 17, 17, 17, 21, 21, 21, 21],
          targets: [
            { index: 2, id: 2 },
            { index: 3, id: 3 },
            { index: 7, id: 7 },
            { index: 8, id: 8 },
            { index: 15, id: 13 },
            { index: 16, id: 14 },
            { index: 19, id: 15 },
            { index: 20, id: 16 },
          ],
        },
      ],
    });
  });

  it('imports a calls log and prints its sdcc pairs', async () => {
    const run = await mw('plan', CALLS, '--method', 'sdcc', '--json');
    expect(run.code).toBe(0);
    const plan = JSON.parse(run.stdout);
    expect(Object.keys(plan)).toEqual(['method', 'student', 'teachers', 'sharedRows', 'pairs']);
    expect(plan.student.ids).toEqual([0, 1, 8, 9, 7, 10, 11, 12]);
    // The teacher the trainer runs: the student's 8 rows (shared), then the leaf's live path 2..7.
    expect(plan.teachers[0].ids).toEqual([0, 1, 8, 9, 7, 10, 11, 12, 2, 3, 4, 5, 6, 7]);
    expect(plan.sharedRows).toBe(8);
    expect(plan.pairs).toEqual([{ id: 7, studentIndex: 4, teacher: 0, teacherIndex: 13 }]);
    const branches = JSON.parse((await mw('plan', CALLS, '--method', 'sdcc', '--teacher', 'logit-tree', '--json')).stdout);
    expect(branches.teachers.map((t: { ids: number[] }) => t.ids)).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
    expect(branches).toMatchObject({ sharedRows: 0, pairs: [{ id: 7, studentIndex: 4, teacher: 0, teacherIndex: 7 }] });
    // The table counts the rows the step runs: 8 + 14 - 8 shared.
    const table = await mw('plan', CALLS, '--method', 'sdcc');
    expect(table.stdout).toContain("teacher 0's first 8 rows are the student's, run once");
    expect(table.stdout).toMatch(/total\s+14\s+4/);
  });

  it('prints a per-sequence table by default, and usage errors exit 1', async () => {
    const run = await mw('plan', WORKED, '--method', 'logit-tree');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('worked-example: logit-tree');
    expect(run.stdout).toMatch(/total\s+27\s+8/);
    const missing = await mw('plan', WORKED);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^mw plan: --method is required/);
  });
});

describe('invalid input', () => {
  const bad = {
    format: 'memorywalker.rollout/v1',
    id: 'bad',
    vocab: 272,
    events: [
      { op: 'append', role: 'prompt', tokens: [1, 2] },
      { op: 'edit', view: [{ keep: [0, 1] }, { keep: [0, 2] }] },
    ],
  };

  it('exits 2 with one stderr line FILE: event N: reason and nothing on stdout', async () => {
    const file = tmpFile('bad.json', JSON.stringify(bad));
    for (const args of [
      ['tree', file, '--json'],
      ['plan', file, '--method', 'packed-4d', '--json'],
      ['tree', file],
    ]) {
      const run = await mw(...args);
      expect(run).toEqual({ code: 2, stdout: '', stderr: `${file}: event 1: keep [0, 2]: id 0 is kept twice\n` });
    }
  });

  it('names the JSONL line, a missing file, and broken JSON', async () => {
    const jsonl = tmpFile('bad.jsonl', `${JSON.stringify({ ...bad, id: 'ok', events: bad.events.slice(0, 1) })}\n${JSON.stringify(bad)}\n`);
    expect(await mw('tree', jsonl, '--json')).toEqual({ code: 2, stdout: '', stderr: `${jsonl}:2: event 1: keep [0, 2]: id 0 is kept twice\n` });
    const nothing = join(TMP, 'nothing.json');
    expect(await mw('tree', nothing, '--json')).toEqual({ code: 2, stdout: '', stderr: `${nothing}: no such file\n` });
    const broken = tmpFile('broken.json', '{"format": "memorywalker.rollout/v1", "id": ');
    const run = await mw('tree', broken);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(new RegExp(`^${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid JSON \\(.+\\)\\n$`));
  });
});

describe('help', () => {
  it('prints usage for mw --help and mw <cmd> --help', async () => {
    const top = await mw('--help');
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/^usage: mw <command>/);
    expect(top.stdout).toMatch(/\n {2}tree {2}/);
    const plan = await mw('plan', '--help');
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^usage: mw plan FILE --method M/);
    expect(plan.stdout).toContain('naive-compressed, naive-full, logit-tree, packed-4d, sdcc');
  });
});
