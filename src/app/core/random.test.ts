// The view-models against the core on generated rollouts of every edit shape: staircase rows are
// the live prefixes (as sets), the collapsed tree covers every trie node once, and every method's
// prefix read off its plan matches the table of prefixes in docs/methods.md.
import { describe, expect, it } from 'vitest';
import { generateRandomRollout } from '../../rollout/generate-random';
import { validateRollout } from '../../rollout';
import { buildStaircase, rowLiveIds } from './staircaseModel';
import { buildTreeModel, NODE } from './treeModel';
import { methodViews } from './methodViews';
import { buildViewData } from './viewData';

const sorted = (ids: ArrayLike<number>) => Array.from(ids).sort((a, b) => a - b);

describe('view-models on generated rollouts', () => {
  for (let seed = 1; seed <= 12; seed++) {
    it(`seed ${seed}`, () => {
      const json = generateRandomRollout({ seed, size: 'medium', textRate: 0.3 });
      const view = buildViewData(validateRollout(json, { file: `seed-${seed}.json` }));
      const { tree, rollout } = view;

      const steps = buildStaircase(view.tape, 'step');
      rollout.targets.forEach((t, row) => expect(rowLiveIds(steps, row)).toEqual(sorted(tree.livePrefix(t))));
      const segments = buildStaircase(view.tape, 'segment');
      for (let k = 0; k <= tree.K; k++) expect(rowLiveIds(segments, k)).toEqual(sorted(tree.branchIds(k)));

      const model = buildTreeModel(view.trie);
      let covered = 0;
      for (const e of model.edges) covered += e.to - e.from + 1;
      expect(covered).toBe(tree.figures.packedLength);
      for (const t of rollout.targets) {
        expect(model.kind[tree.scoringNode[t]]).toBe(NODE.target);
      }

      for (const t of rollout.targets.filter((_, i) => i % 5 === 0)) {
        const m = Object.fromEntries(methodViews(view, t).map((v) => [v.method, v]));
        const live = Array.from(tree.livePrefix(t));
        const final = tree.finalPrefix(t);
        expect(Array.from(m['logit-tree'].prefix!)).toEqual(live);
        expect(Array.from(m['packed-4d'].prefix!)).toEqual(live);
        expect(m['naive-compressed'].prefix && Array.from(m['naive-compressed'].prefix)).toEqual(final && Array.from(final));
        expect(Array.from(m['naive-full'].prefix!)).toEqual(Array.from(tree.fullPrefix(t)));
        expect(m['naive-compressed'].missing).toBe(tree.dropped[t] ? live.length : tree.evictionMass[t]);
        if (tree.diverging[t]) expect(Array.from(m.sdcc.teacher!)).toEqual(live);
        else expect(m.sdcc.teacher).toBeNull();
      }
    });
  }
});
