// The compact per-target rows of `mw tree --per-target`: a prefix named by its length in a branch
// spelled once (branchView) is exactly the tree's live and final prefix, on random rollouts of
// every size and edit shape.

import { describe, expect, it } from 'vitest';
import { generateRandomRollout, type RandomSize } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { deriveTargetFacts, deriveTree } from './derive';
import { branchView, targetRow } from './report';

const expand = (ranges: [number, number][], n: number) => ranges.flatMap(([a, b]) => Array.from({ length: b - a }, (_, i) => a + i)).slice(0, n);

describe('targetRow and branchView', () => {
  it("name each target's live and final prefix exactly, on 80 random rollouts", () => {
    let targets = 0;
    for (let seed = 0; seed < 80; seed++) {
      const size: RandomSize = seed % 4 === 3 ? 'medium' : 'small';
      const rollout = validateRollout(generateRandomRollout({ seed, size }), { file: 'random' });
      const tree = deriveTree(rollout);
      // What mw tree --per-target derives (no trie) gives the same rows and figures as the whole tree.
      const facts = deriveTargetFacts(rollout);
      expect(facts.figures).toEqual(tree.figures);
      const views = Array.from({ length: tree.K + 1 }, (_, k) => branchView(facts, k));
      for (const id of tree.targets) {
        const row = targetRow(facts, id);
        expect(row).toEqual(targetRow(tree, id));
        // Compared as text: one assertion per target, not one per id.
        expect(expand(views[row.segment], row.livePrefix).join()).toBe(tree.livePrefix(id).join());
        if (row.finalPrefix === null) expect(tree.dropped[id]).toBe(1);
        else expect(expand(views[tree.K], row.finalPrefix).join()).toBe(tree.finalPrefix(id)?.join());
        targets++;
      }
    }
    expect(targets).toBeGreaterThan(300);
  });
});
