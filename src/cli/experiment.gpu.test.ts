// `mw experiment matrix --quick` as a user runs it, on a tiny checkpoint with one update per run:
// every file is written and results.json holds every editor × method cell with finite numbers.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MatrixResults } from '../experiments/matrix';
import { DEMO_TASK } from '../harness/env';
import { MODEL_PRESETS } from '../model/config';
import { initWeights, type ModelWeights } from '../model/params';
import { EOS } from '../rollout/tokenizer';
import { METHODS } from '../plan/types';
import { mw, tmpDir, writeCheckpoint } from './subprocess.testing';

/**
 * Raises the logit of `token` by `boost` nats everywhere: ln_f.bias += boost·wte[token] / |wte[token]|²
 * (the head is tied to the embedding).
 */
function favour(weights: ModelWeights, token: number, boost: number): ModelWeights {
  const C = weights.config.nEmbd;
  const wte = weights.tensors.get('wte.weight')!;
  const bias = weights.tensors.get('ln_f.bias')!;
  let norm2 = 0;
  for (let c = 0; c < C; c++) norm2 += wte[token * C + c] ** 2;
  for (let c = 0; c < C; c++) bias[c] += (boost * wte[token * C + c]) / norm2;
  return weights;
}

const TMP = tmpDir('experiment');
/**
 * Tiny with room for lookup episodes (the matrix keeps 100 positions free above each decoded view),
 * inclined to answer at once (EOS): short episodes keep the 3 × (1 + 5 + 1) batches of this test
 * cheap. The semantics under edits are src/experiments/matrix.gpu.test.ts's.
 */
const CKPT = writeCheckpoint(join(TMP, 'tiny.safetensors'), favour(initWeights({ ...MODEL_PRESETS.tiny, nPositions: 1024 }, 4), EOS, 3));
const EDITORS = ['none', 'window', 'compact'];
const SCORING = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const;

describe('mw experiment matrix', () => {
  it('--quick writes results.json with every editor × method cell, table.md and the SVGs', async () => {
    const out = join(TMP, 'quick');
    const run = await mw(['experiment', 'matrix', '--quick', '--ckpt', CKPT, '--steps', '1', '--n', '2', '--group', '2', '--eval-n', '1', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const units = EDITORS.length * (2 + METHODS.length * 2);
    expect(run.stderr).toContain(`mw experiment: [${units}/${units}] compact sdcc: held-out EM`);
    const files = ['results.json', 'table.md', ...EDITORS.flatMap((e) => [`drift-${e}.svg`, `curves-${e}.svg`])];
    for (const f of files) expect(existsSync(join(out, f)), f).toBe(true);
    expect(run.stdout.startsWith(`wrote ${files.map((f) => join(out, f)).join(', ')} (`)).toBe(true);

    const results: MatrixResults & { partial: boolean; checkpoint: string } = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(results).toMatchObject({ format: 'memorywalker.experiment-matrix/v1', partial: false, checkpoint: CKPT });
    expect(results.config).toMatchObject({
      n: 2,
      group: 2,
      steps: 1,
      evalN: 1,
      methods: [...METHODS],
      trainTemperature: 1,
      evalTemperature: 0,
      driftSampling: { temperature: 1, topK: 0, topP: 1 },
    });
    expect(results.editors.map((e) => e.editor)).toEqual(EDITORS);
    // Without --env: the demo checkpoint's task, edited at its budget.
    expect(results.config.env).toEqual(DEMO_TASK.env);
    expect(results.config.editors.filter((e) => e.kind !== 'none').map((e) => (e as { budget: number }).budget)).toEqual([DEMO_TASK.budget, DEMO_TASK.budget]);
    for (const editor of results.editors) {
      expect(editor.rollouts.batch.rollouts).toBe(4);
      for (const method of SCORING) expect(Number.isFinite(editor.drift.methods[method].logdiff)).toBe(true);
      // A random init still decodes its own rollouts: the exact replays sit at the floor.
      expect(editor.drift.methods['logit-tree'].logdiff).toBeLessThan(1e-4);
      expect(editor.drift.methods['packed-4d'].logdiff).toBeLessThan(1e-4);
      for (const method of METHODS) {
        const cell = editor.runs[method];
        expect(cell, `${editor.editor} × ${method}`).toBeDefined();
        expect(cell!.steps).toHaveLength(1);
        const m = cell!.steps[0].metrics;
        expect(m, `${editor.editor} × ${method}: ${cell!.steps[0].skipped}`).not.toBeNull();
        for (const v of [m!.loss, m!.stepMs, m!.logdiff]) expect(Number.isFinite(v)).toBe(true);
        expect(cell!.final.em).toBeGreaterThanOrEqual(0);
        expect(cell!.final.em).toBeLessThanOrEqual(1);
      }
    }
    const table = readFileSync(join(out, 'table.md'), 'utf8');
    const rows = table.split('\n').filter((l) => /^\| (none|window|compact) \| (naive-compressed|naive-full|logit-tree|packed-4d|sdcc) \| /.test(l));
    expect(rows).toHaveLength(EDITORS.length * (METHODS.length + SCORING.length)); // Table 1 and the drift table
    expect(readFileSync(join(out, 'drift-compact.svg'), 'utf8')).toMatch(/^<svg [^>]*viewBox="0 0 \d+ \d+"/);
  });

  it('refuses bad flags before any GPU work (exit 1)', async () => {
    const runs = await Promise.all([
      mw(['experiment', 'matrix', '--ckpt', CKPT]),
      mw(['experiment', 'matrix', '--ckpt', CKPT, '--out', TMP, '--editors', 'none,zip']),
      mw(['experiment', 'matrix', '--ckpt', CKPT, '--out', TMP, '--methods', 'sdcc', '--steps', '0']),
      mw(['experiment', 'matrix', '--config', 'tiny', '--out', TMP]),
      mw(['experiment', 'grid', '--out', TMP]),
      mw(['experiment', 'matrix', '--ckpt', CKPT, '--out', TMP, '--top-p', '0']),
      mw(['experiment', 'matrix', '--ckpt', CKPT, '--out', TMP, '--temperature', 'hot']),
    ]);
    for (const run of runs) expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(runs[0].stderr).toMatch(/^mw experiment: --out DIR is required/);
    expect(runs[1].stderr).toMatch(/^mw experiment: unknown --editors entry "zip"/);
    expect(runs[2].stderr).toMatch(/^mw experiment: --steps must be an integer ≥ 1/);
    expect(runs[3].stderr).toMatch(/^mw experiment: random init .*P 128\): the model's 128 positions leave no room for episodes/);
    expect(runs[4].stderr).toMatch(/^mw experiment: unknown subcommand "grid"/);
    expect(runs[5].stderr).toMatch(/^mw experiment: --top-p must be a number in \(0, 1\], got 0/);
    expect(runs[6].stderr).toMatch(/^mw experiment: --temperature must be a number ≥ 0, got "hot"/);
  });
});
