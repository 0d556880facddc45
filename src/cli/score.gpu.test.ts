// `mw score` as a user runs it: every method's targets, Theorem 1 on the printed numbers, the CPU
// reference, JSONL, the human table, and the exit-2 / exit-1 / exit-69 contract.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_PRESETS } from '../model/config';
import { initWeights } from '../model/params';
import { referenceLogprobs } from '../model/reference/model';
import { buildPlan } from '../plan/build';
import { parseRolloutFile } from '../rollout/parse';
import { randomWeights } from '../model/random-weights';
import { deriveTree } from '../tree/derive';
import { mw, tmpDir, WORKED, workedLine, writeCheckpoint, writeSmallDataset } from './subprocess.testing';

const TMP = tmpDir('score');
const weights = randomWeights(MODEL_PRESETS.tiny, 21);
const CKPT = writeCheckpoint(join(TMP, 'tiny.safetensors'), weights);

interface Scored {
  method: string;
  targets: { id: number; logprob: number }[];
}

async function score(method: string, file = WORKED): Promise<Scored> {
  const run = await mw(['score', '--ckpt', CKPT, file, '--method', method, '--json']);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

const byId = (s: Scored) => new Map(s.targets.map((t) => [t.id, t.logprob]));
/** logit-tree on the worked example, from the first test. */
let workedTree: Scored;

describe('mw score', () => {
  it('scores every target under each method; logit-tree and packed-4d agree within 1e-5 and match the float64 reference', async () => {
    const [nc, nf, lt, p4] = await Promise.all(['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'].map((m) => score(m)));
    workedTree = lt;
    expect(nc.method).toBe('naive-compressed');
    expect(nc.targets.map((t) => t.id)).toEqual([13, 14, 15, 16]); // 2, 3, 7, 8 are dropped
    for (const s of [nf, lt, p4]) expect(s.targets.map((t) => t.id)).toEqual([2, 3, 7, 8, 13, 14, 15, 16]);
    for (const s of [nc, nf, lt, p4]) for (const t of s.targets) expect(t.logprob).toBeLessThan(0);

    const tree = byId(lt);
    const packed = byId(p4);
    for (const [id, logprob] of tree) expect(Math.abs(logprob - packed.get(id)!), `target ${id}`).toBeLessThan(1e-5);

    const rollout = parseRolloutFile(readFileSync(WORKED, 'utf8'), 'worked-example.json')[0];
    const plan = buildPlan(deriveTree(rollout), 'packed-4d').sequences[0];
    const reference = referenceLogprobs(weights, plan, plan.targets);
    plan.targets.forEach((t, j) => expect(Math.abs(packed.get(t.id)! - reference[j]), `target ${t.id}`).toBeLessThan(1e-4));

    // 15 and 16 see the same prefix under the final walk as when generated; 13 and 14 do not (docs/tree.md).
    const compressed = byId(nc);
    for (const id of [15, 16]) expect(Math.abs(compressed.get(id)! - tree.get(id)!)).toBeLessThan(1e-5);
    for (const id of [13, 14]) expect(Math.abs(compressed.get(id)! - tree.get(id)!)).toBeGreaterThan(1e-3);
    // naive-full keeps evicted content in view from target 13 on.
    expect(Math.abs(byId(nf).get(13)! - tree.get(13)!)).toBeGreaterThan(1e-3);
    expect(Math.abs(byId(nf).get(2)! - tree.get(2)!)).toBeLessThan(1e-5);
  });

  it('prints an array in file order for JSONL, and a table by default', async () => {
    const data = writeSmallDataset(join(TMP, 'data.jsonl'));
    const [run, table] = await Promise.all([
      mw(['score', '--ckpt', CKPT, data, '--method', 'logit-tree', '--json']),
      mw(['score', '--ckpt', CKPT, WORKED, '--method', 'naive-compressed']),
    ]);
    expect(run.code).toBe(0);
    const out: Scored[] = JSON.parse(run.stdout);
    const rollouts = parseRolloutFile(readFileSync(data, 'utf8'), 'data.jsonl');
    expect(out.map((s) => s.targets.map((t) => t.id))).toEqual(rollouts.map((r) => Array.from(r.targets)));
    // Packed with the other rollouts or alone, the worked example's scores are the same.
    out[0].targets.forEach((t, i) => expect(Math.abs(t.logprob - workedTree.targets[i].logprob)).toBeLessThan(1e-6));

    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^worked-example: naive-compressed, 4 targets scored \(4 dropped\), mean logprob -\d+\.\d{6}$/);
    expect(lines[1].split(/\s+/)).toEqual(['id', 'token', 'logprob']);
    expect(lines.slice(2).map((l) => l.trim().split(/\s+/).slice(0, 2))).toEqual([
      ['13', '\\x18'],
      ['14', '\\x19'],
      ['15', '\\x1a'],
      ['16', '\\x1b'],
    ]);
  });

  it('refuses sdcc (an objective, not a scoring) and a missing --ckpt with a usage error', async () => {
    const sdcc = await mw(['score', '--ckpt', CKPT, WORKED, '--method', 'sdcc', '--json']);
    expect(sdcc.code).toBe(1);
    expect(sdcc.stdout).toBe('');
    expect(sdcc.stderr).toMatch(/^mw score: sdcc is an objective .*not a scoring/);
    const noCkpt = await mw(['score', WORKED, '--method', 'logit-tree']);
    expect(noCkpt.code).toBe(1);
    expect(noCkpt.stderr).toMatch(/^mw score: --ckpt CKPT is required/);
  });

  it("a bad checkpoint or rollout is exit 2: one stderr line naming the file and the codec's tensor / byte range", async () => {
    const bytes = readFileSync(CKPT);
    const truncated = join(TMP, 'truncated.safetensors');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 100));
    const run = await mw(['score', '--ckpt', truncated, WORKED, '--method', 'logit-tree', '--json']);
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(
      new RegExp(
        `^${truncated}: safetensors: truncated file: tensor transformer\\.ln_f\\.bias needs bytes \\d+\\.\\.${bytes.length}, but the file has ${bytes.length - 100} bytes\\n$`,
      ),
    );

    const missing = await mw(['score', '--ckpt', join(TMP, 'none.safetensors'), WORKED, '--method', 'logit-tree']);
    expect(missing).toMatchObject({ code: 2, stdout: '', stderr: `${join(TMP, 'none.safetensors')}: no such file\n` });

    const badRollout = join(TMP, 'bad.jsonl');
    writeFileSync(badRollout, `${workedLine()}\n{"format": "memorywalker.rollout/v1", "id": "x", "vocab": 272, "events": [{"op": "jump"}]}\n`);
    const bad = await mw(['score', '--ckpt', CKPT, badRollout, '--method', 'logit-tree']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(new RegExp(`^${badRollout}:2: event 0: .+\\n$`));
  });

  it('a rollout the model cannot take (vocabulary) is exit 2 naming what it needs; one longer than the model is scored as far as it reaches', async () => {
    const short = writeCheckpoint(join(TMP, 'p16.safetensors'), initWeights({ ...MODEL_PRESETS.tiny, nPositions: 16 }, 1));
    // The tape is 17 long (target 16 stands at position 16); the longest branch 10.
    const full = await mw(['score', '--ckpt', short, WORKED, '--method', 'naive-full', '--json']);
    expect(full).toMatchObject({ code: 0, stderr: '' });
    const scored = JSON.parse(full.stdout);
    expect(scored.targets.map((t: { id: number }) => t.id)).toEqual([2, 3, 7, 8, 13, 14, 15]);
    expect(scored.outOfReach).toEqual([16]);
    expect(JSON.parse((await mw(['score', '--ckpt', short, WORKED, '--method', 'logit-tree', '--json'])).stdout).outOfReach).toBeUndefined();

    const small = writeCheckpoint(join(TMP, 'v16.safetensors'), initWeights({ ...MODEL_PRESETS.tiny, vocabSize: 16 }, 1));
    const vocab = await mw(['score', '--ckpt', small, WORKED, '--method', 'logit-tree']);
    expect(vocab).toMatchObject({ code: 2, stdout: '' });
    expect(vocab.stderr).toBe(`${WORKED}: rollout "worked-example": token 20 (id 2) is outside the model's vocabulary of 16\n`);
  });

  it('without WebGPU: exit 69 and one line of our own saying what is missing', async () => {
    const run = await mw(['score', '--ckpt', CKPT, WORKED, '--method', 'logit-tree'], { VK_ICD_FILENAMES: join(TMP, 'no-driver.json') });
    expect(run).toMatchObject({ code: 69, stdout: '' });
    // Vulkan's loader adds its own warnings; ours is the last line.
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^mw score: no WebGPU device \(no-adapter\): .*apt-get install/);
  });
});
