// deriveTree against the naive reference (reference.ts) on thousands of random rollouts covering
// every edit shape; plus the structural facts docs/tree.md states (N_packed bounds, one node per target).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EDIT_SHAPES, generateRandomRollout, type EditShape, type RandomSize } from '../rollout/generate-random';
import { validateRollout } from '../rollout/validate';
import { parseRolloutFile } from '../rollout/parse';
import { deriveFigures, deriveTree } from './derive';
import { referenceTree } from './reference';

function same(got: ArrayLike<number> | null, want: ArrayLike<number> | null, what: string): void {
  if (got === null || want === null) {
    if (got !== want) throw new Error(`${what}: got ${got === null ? 'null' : '[...]'}, want ${want === null ? 'null' : '[...]'}`);
    return;
  }
  const ok = got.length === want.length && Array.prototype.every.call(got, (x: number, i: number) => x === want[i]);
  if (!ok) throw new Error(`${what}:\n  got  [${Array.from(got).join(',')}]\n  want [${Array.from(want).join(',')}]`);
}

const sizes = fc.oneof(
  { weight: 5, arbitrary: fc.constant<RandomSize>('small') },
  { weight: 10, arbitrary: fc.constant<RandomSize>('medium') },
  { weight: 1, arbitrary: fc.constant<RandomSize>('large') },
);

describe('deriveTree on random rollouts', () => {
  it('matches the naive reference in every branch, prefix, figure and trie array', () => {
    const shapes = new Map<EditShape, number>();
    let prefixBranches = 0;
    let forests = 0;
    let diverging = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), sizes, (seed, size) => {
        const json = generateRandomRollout({ seed, size });
        for (const s of (json.meta as { generator: { shapes: EditShape[] } }).generator.shapes) shapes.set(s, (shapes.get(s) ?? 0) + 1);
        const rollout = validateRollout(json, { file: `random-${seed}` });
        const tree = deriveTree(rollout);
        const ref = referenceTree(rollout);

        ref.branches.forEach((b, k) => same(tree.branchIds(k), b, `branch ${k}`));
        same(tree.finalWalk, ref.finalWalk, 'final walk');
        ref.evicted.forEach((ev, k) => same(tree.edits[k].evicted, ev, `evicted by edit ${k + 1}`));
        same(tree.packedOrder, ref.packedOrder, 'packed order');
        same(tree.depth, ref.depth, 'depth');
        same(tree.parent, ref.parent, 'parent');
        same(tree.end, ref.end, 'end');
        same(tree.nodeBranch, ref.nodeBranch, 'nodeBranch');
        same(tree.branchLeaf, ref.branchLeaf, 'branchLeaf');

        let dropped = 0;
        let massTotal = 0;
        let massMax = 0;
        let D = 0;
        for (const t of rollout.targets) {
          const live = ref.livePrefix(t);
          const final = ref.finalPrefix(t);
          same(tree.livePrefix(t), live, `live prefix of ${t}`);
          same(tree.finalPrefix(t), final, `final prefix of ${t}`);
          if (tree.scoringNode[t] !== ref.scoringNode.get(t)) throw new Error(`scoring node of ${t}`);
          if (final === null) {
            dropped++;
            if (!tree.dropped[t] || tree.evictionMass[t] !== -1 || tree.diverging[t]) throw new Error(`dropped ${t}`);
            continue;
          }
          const inFinal = new Set(final);
          const mass = live.filter((x) => !inFinal.has(x)).length;
          const div = live.length !== final.length || live.some((x, i) => x !== final[i]);
          if (tree.evictionMass[t] !== mass) throw new Error(`eviction mass of ${t}: ${tree.evictionMass[t]} != ${mass}`);
          if (tree.diverging[t] !== (div ? 1 : 0)) throw new Error(`diverging ${t}`);
          massTotal += mass;
          massMax = Math.max(massMax, mass);
          if (div) D++;
        }
        const branchTotal = ref.branches.reduce((n, b) => n + b.length, 0);
        expect(tree.figures).toEqual({
          K: ref.branches.length - 1,
          branches: ref.branches.length,
          physicalLength: rollout.length,
          finalWalkLength: ref.finalWalk.length,
          packedLength: ref.packedOrder.length,
          targets: rollout.targets.length,
          droppedTargets: dropped,
          divergingLeaves: D,
          evictionMassTotal: massTotal,
          evictionMassMax: massMax,
        });
        if (tree.figures.packedLength < tree.figures.finalWalkLength || tree.figures.packedLength > branchTotal) {
          throw new Error('N_packed out of [final walk length, sum of branch lengths]');
        }
        if (new Set(Array.from(rollout.targets, (t) => tree.scoringNode[t])).size !== rollout.targets.length) {
          throw new Error('two targets share a scoring node');
        }

        diverging += D;
        if (tree.parent.filter((p) => p === -1).length > 1) forests++;
        for (let k = 1; k < ref.branches.length; k++) {
          for (let j = 0; j < k; j++) {
            const a = ref.branches[k];
            const b = ref.branches[j];
            if (a.length <= b.length && a.every((x, i) => x === b[i])) {
              prefixBranches++;
              break;
            }
          }
        }
      }),
      { numRuns: 2500, seed: 20260901 },
    );
    // The generator really exercised every shape and the awkward trie cases.
    for (const shape of EDIT_SHAPES) expect(shapes.get(shape) ?? 0).toBeGreaterThan(200);
    expect(prefixBranches).toBeGreaterThan(50);
    expect(forests).toBeGreaterThan(50);
    expect(diverging).toBeGreaterThan(1000);
  });
});

describe('deriveFigures', () => {
  it('gives the same figures as deriveTree without laying out the trie, on 200 random rollouts', () => {
    for (let seed = 0; seed < 200; seed++) {
      const [rollout] = parseRolloutFile(JSON.stringify(generateRandomRollout({ seed, size: 'small', id: `f${seed}` })), 'f.json');
      expect(deriveFigures(rollout), `seed ${seed}`).toEqual(deriveTree(rollout).figures);
    }
  });
});
