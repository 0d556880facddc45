// The built-in examples the demo model played: they validate, every target carries a recorded
// log-probability, and the demo checkpoint itself (the float64 CPU reference of it) gives each target
// that log-probability under its live prefix: the files were made by the demo model, not the expert.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadCheckpoint } from '../../model/checkpoint';
import { referenceLogprobs } from '../../model/reference/model';
import { buildPlan } from '../../plan';
import { parseRolloutFile } from '../../rollout';
import { deriveTree } from '../../tree';
import { EXAMPLES } from './examples';

const root = new URL('../../../', import.meta.url);
const demo = loadCheckpoint(new Uint8Array(readFileSync(new URL('public/models/demo.safetensors', root))));
const made = EXAMPLES.filter((e) => e.kind === 'file' && e.made);

describe('built-in examples played by the demo model', () => {
  it('come first after the worked example, each made by mw generate with the demo checkpoint', () => {
    expect(EXAMPLES.map((e) => e.name).slice(0, 3)).toEqual(['worked-example', 'demo-window', 'demo-compact']);
    for (const e of made) if (e.kind === 'file') expect(e.made!.slice(0, 3)).toEqual(['generate', '--ckpt', 'public/models/demo.safetensors']);
  });

  for (const example of made) {
    if (example.kind !== 'file') continue;
    it(`${example.name}: validates, and the demo model under each live prefix gives every recorded log-probability (within 1e-4)`, () => {
      const rollouts = parseRolloutFile(readFileSync(new URL(`public/${example.path}`, root), 'utf8'), example.path);
      expect(rollouts).toHaveLength(4);
      let worst = 0;
      let targets = 0;
      for (const rollout of rollouts) {
        expect(rollout.K).toBeGreaterThan(0);
        expect(rollout.reward).toBe(1);
        for (const t of rollout.targets) expect(Number.isNaN(rollout.logprobs[t]), `target ${t} of ${rollout.id} has a logprob`).toBe(false);
        for (const seq of buildPlan(deriveTree(rollout), 'logit-tree').sequences) {
          const lp = referenceLogprobs(demo, seq, seq.targets);
          seq.targets.forEach((t, i) => {
            worst = Math.max(worst, Math.abs(lp[i] - rollout.logprobs[t.id]));
            targets++;
          });
        }
      }
      expect(targets).toBeGreaterThan(100);
      expect(worst).toBeLessThan(1e-4);
    });
  }
});
