// Every method's plan on thousands of random rollouts: what each target sees through end[] is
// exactly the prefix its method promises (docs/methods.md), with gap-free positions and the right
// predictor; and packed batches of several rollouts never see each other.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateRandomRollout, type RandomSize } from '../rollout/generate-random';
import type { Rollout } from '../rollout/rollout';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree/derive';
import type { ConditioningTree } from '../tree/types';
import { packBatch, packSdccBatch } from './batch';
import { buildPlan, sdccUnion } from './build';
import { planNeeds } from './needs';
import type { Method, PlanSequence, SequenceMethod } from './types';
import { visibleKeys } from './visibility';

function fail(message: string): never {
  throw new Error(message);
}

function sameIds(got: readonly number[], want: ArrayLike<number>, what: string): void {
  if (got.length !== want.length || got.some((x, i) => x !== want[i])) {
    fail(`${what}:\n  got  [${got.join(',')}]\n  want [${Array.from(want).join(',')}]`);
  }
}

/**
 * Checks every target of `seq` against `expected(id)` (the prefix its method promises) and
 * returns the scored ids. Visibility is read from end[] alone, as the attention kernel reads it.
 */
function checkSequence(rollout: Rollout, seq: PlanSequence, expected: (id: number) => ArrayLike<number>, what: string): number[] {
  const n = seq.ids.length;
  if (seq.tokens.length !== n || seq.positions.length !== n || seq.end.length !== n) fail(`${what}: array lengths differ`);
  for (let k = 0; k < n; k++) {
    if (seq.end[k] <= k || seq.end[k] > n) fail(`${what}: end[${k}] = ${seq.end[k]} outside (k, n]`);
    if (seq.tokens[k] !== rollout.tokens[seq.ids[k]]) fail(`${what}: token at ${k}`);
  }
  let last = -1;
  return seq.targets.map((t) => {
    if (t.index <= last) fail(`${what}: targets out of index order`);
    last = t.index;
    if (seq.ids[t.index] !== t.id || t.token !== rollout.tokens[t.id] || !rollout.isTarget[t.id]) fail(`${what}: target ${t.id} record`);
    const lp = rollout.logprobs[t.id];
    if (Number.isNaN(lp) ? t.rolloutLogprob !== undefined : t.rolloutLogprob !== lp) fail(`${what}: logprob of ${t.id}`);
    const keys = visibleKeys(seq.end, t.index);
    if (keys[keys.length - 1] !== t.index) fail(`${what}: target ${t.id} does not see itself`);
    sameIds(
      keys.slice(0, -1).map((k) => seq.ids[k]),
      expected(t.id),
      `${what}: prefix of target ${t.id}`,
    );
    keys.forEach((k, j) => seq.positions[k] !== j && fail(`${what}: positions seen by ${t.id} are not gap-free (${k} has ${seq.positions[k]}, want ${j})`));
    if (t.predictor !== keys[keys.length - 2]) fail(`${what}: predictor of ${t.id} is ${t.predictor}, want ${keys[keys.length - 2]}`);
    return t.id;
  });
}

function checkAllPlans(tree: ConditioningTree): void {
  const { rollout } = tree;
  const all = Array.from(rollout.targets);
  const kept = all.filter((t) => !tree.dropped[t]);
  const live = (id: number) => tree.livePrefix(id);
  const final = (id: number) => tree.finalPrefix(id) ?? fail(`target ${id} is dropped but scored`);

  // What each plan needs of the model, in the tree's own figures.
  const needs = (method: Method) => planNeeds(buildPlan(tree, method));
  let longestBranch = 0;
  for (let k = 0; k <= tree.K; k++) longestBranch = Math.max(longestBranch, tree.branchIds(k).length);
  const want: Record<SequenceMethod, [number, number, number]> = {
    'naive-compressed': [tree.figures.finalWalkLength, tree.figures.finalWalkLength, kept.length],
    'naive-full': [rollout.length, rollout.length, all.length],
    'logit-tree': [-1, -1, all.length], // rows and positions: the branches that hold targets, checked below
    'packed-4d': [tree.figures.packedLength, longestBranch, all.length],
  };
  for (const [method, [rows, positions, targets]] of Object.entries(want) as [SequenceMethod, [number, number, number]][]) {
    const got = needs(method);
    if (got.targets !== targets || (rows >= 0 && (got.rows !== rows || got.positions !== positions))) {
      fail(
        `${method} needs ${JSON.stringify({ rows: got.rows, positions: got.positions, targets: got.targets })}, want ${JSON.stringify({ rows, positions, targets })}`,
      );
    }
  }
  if (needs('logit-tree').positions > longestBranch) fail('logit-tree needs more positions than the longest branch');

  const compressed = buildPlan(tree, 'naive-compressed').sequences;
  if (compressed.length !== 1) fail('naive-compressed has one sequence');
  sameIds(checkSequence(rollout, compressed[0], final, 'naive-compressed'), kept, 'naive-compressed scores the non-dropped targets');

  const full = buildPlan(tree, 'naive-full').sequences;
  if (full.length !== 1) fail('naive-full has one sequence');
  sameIds(
    checkSequence(rollout, full[0], (id) => tree.fullPrefix(id), 'naive-full'),
    all,
    'naive-full scores every target',
  );

  // Exact methods: each target scored exactly once, on its live prefix.
  const logit = buildPlan(tree, 'logit-tree').sequences;
  const logitScored = logit.flatMap((s, i) => checkSequence(rollout, s, live, `logit-tree sequence ${i}`)).sort((a, b) => a - b);
  sameIds(logitScored, all, 'logit-tree scores every target once');
  for (const s of logit) if (s.targets.length === 0) fail('logit-tree sequence without targets');
  for (const s of logit) for (let k = 0; k < s.end.length; k++) if (s.end[k] !== s.ids.length) fail('logit-tree sequence not causal');

  const packed = buildPlan(tree, 'packed-4d').sequences;
  if (packed.length !== 1) fail('packed-4d has one sequence');
  if (packed[0].ids.length !== tree.figures.packedLength) fail('packed-4d length is not N_packed');
  const packedScored = checkSequence(rollout, packed[0], live, 'packed-4d').sort((a, b) => a - b);
  sameIds(packedScored, all, 'packed-4d scores every target once');

  for (const teacher of ['logit-tree', 'packed-4d'] as const) {
    const plan = buildPlan(tree, 'sdcc', { sdccTeacher: teacher });
    sameIds(checkSequence(rollout, plan.student, final, 'sdcc student'), kept, 'sdcc student = naive-compressed');
    const taught = plan.teachers.flatMap((s, i) => checkSequence(rollout, s, live, `sdcc teacher ${i}`)).sort((a, b) => a - b);
    sameIds(taught, tree.divergingLeaves, 'sdcc teachers hold exactly the diverging leaves');
    sameIds(
      plan.pairs.map((p) => p.id),
      tree.divergingLeaves,
      'sdcc pairs are the diverging leaves',
    );
    for (const p of plan.pairs) {
      if (plan.student.ids[p.studentIndex] !== p.id) fail(`sdcc pair ${p.id}: student index`);
      if (plan.teachers[p.teacher].ids[p.teacherIndex] !== p.id) fail(`sdcc pair ${p.id}: teacher index`);
      if (!plan.teachers[p.teacher].targets.some((t) => t.index === p.teacherIndex)) fail(`sdcc pair ${p.id}: not a teacher target`);
    }
  }

  // SDCC's student and packed teacher as one tree: the final walk first, the teacher rows it does not share after.
  const union = sdccUnion(tree);
  if (!union) {
    if (tree.divergingLeaves.length) fail('sdccUnion: null with diverging leaves');
    return;
  }
  const S = tree.finalWalk.length;
  if (union.studentLength !== S) fail('sdccUnion: student length');
  sameIds(Array.from(union.tree.ids.subarray(0, S)), tree.finalWalk, 'sdccUnion rows 0..S-1 are the final walk');
  for (let r = 0; r < S; r++)
    sameIds(
      visibleKeys(union.tree.end, r),
      Array.from({ length: r + 1 }, (_, j) => j),
      `sdccUnion student row ${r} sees the rows before it`,
    );
  sameIds(
    checkSequence(rollout, union.tree, live, 'sdcc union').sort((a, b) => a - b),
    tree.divergingLeaves,
    'sdcc union scores the diverging leaves',
  );
  // Its rows are exactly the trie nodes on the final walk's path or a diverging leaf's, each once.
  const onPaths = new Set<number>();
  for (const from of [tree.branchLeaf[tree.K], ...Array.from(tree.divergingLeaves, (id) => tree.scoringNode[id])]) {
    for (let node = from; node >= 0; node = tree.parent[node]) onPaths.add(node);
  }
  if (union.tree.ids.length !== onPaths.size) fail(`sdccUnion: ${union.tree.ids.length} rows, the final walk and the leaves' paths hold ${onPaths.size} nodes`);
  // The default SDCC plan is what the trainer runs: this union, its student rows shared.
  const plan = buildPlan(tree, 'sdcc');
  sameIds(Array.from(plan.teachers[0].ids), union.tree.ids, 'sdcc packed teacher is the union tree');
  if (plan.sharedRows !== S) fail(`sdcc plan shares ${plan.sharedRows} rows, want the final walk's ${S}`);
  // One grouped forward: the student's rows once, then the teacher's own.
  if (planNeeds(plan).rows !== union.tree.ids.length) fail(`sdcc needs ${planNeeds(plan).rows} rows, its forward runs ${union.tree.ids.length}`);
}

const sizes = fc.oneof(
  { weight: 5, arbitrary: fc.constant<RandomSize>('small') },
  { weight: 10, arbitrary: fc.constant<RandomSize>('medium') },
  { weight: 1, arbitrary: fc.constant<RandomSize>('large') },
);
const seeds = fc.integer({ min: 0, max: 2 ** 31 - 1 });
const treeOf = (seed: number, size: RandomSize) => deriveTree(validateRollout(generateRandomRollout({ seed, size }), { file: `random-${seed}` }));

describe('scoring plans on random rollouts', () => {
  it('give each target exactly the prefix its method promises', () => {
    let diverging = 0;
    fc.assert(
      fc.property(seeds, sizes, (seed, size) => {
        const tree = treeOf(seed, size);
        diverging += tree.divergingLeaves.length;
        checkAllPlans(tree);
      }),
      { numRuns: 2000, seed: 4242 },
    );
    expect(diverging).toBeGreaterThan(1000);
  });

  it("pack SDCC students and their teacher rows as groups: rows see their own rollout's tree only", () => {
    const groupedKeys = (end: ArrayLike<number>, group: ArrayLike<number>, i: number) => visibleKeys(end, i).filter((k) => group[k] === group[i]);
    fc.assert(
      fc.property(fc.array(seeds, { minLength: 1, maxLength: 4 }), (list) => {
        const trees = list.map((seed) => treeOf(seed, 'small'));
        const student = packBatch(trees.map((t) => buildPlan(t, 'sdcc').student));
        const batch = packSdccBatch(student, trees.map(sdccUnion));
        const S = student.ids.length;
        expect(batch.studentRows).toBe(S);
        sameIds(Array.from(batch.tokens.subarray(0, S)), student.tokens, 'student tokens first');
        sameIds(Array.from(batch.positions.subarray(0, S)), student.positions, 'student positions first');
        for (let i = 0; i < S; i++) sameIds(groupedKeys(batch.end, batch.group, i), visibleKeys(student.end, i), `student row ${i} sees as in its own batch`);
        const leaves = trees.reduce((n, t) => n + t.divergingLeaves.length, 0);
        expect(batch.teacherTargets).toHaveLength(leaves);
        for (const t of batch.teacherTargets) {
          const tree = trees[t.sequence];
          const keys = groupedKeys(batch.end, batch.group, t.index);
          if (keys[keys.length - 1] !== t.index || t.predictor !== keys[keys.length - 2]) fail(`teacher target ${t.id}: index or predictor`);
          // Ids through the union tree of its rollout: the row's token is that id's token, positions gap-free.
          const union = sdccUnion(tree)!;
          const local = union.tree.targets.find((x) => x.id === t.id) ?? fail('teacher target lost');
          sameIds(
            keys.map((k) => batch.tokens[k]),
            visibleKeys(union.tree.end, local.index).map((k) => union.tree.tokens[k]),
            `teacher ${t.id}: tokens seen`,
          );
          keys.forEach((k, j) => batch.positions[k] !== j && fail(`teacher ${t.id}: positions not gap-free`));
        }
      }),
      { numRuns: 300, seed: 9 },
    );
  });

  it('pack several rollouts block-diagonally: no query sees another block', () => {
    fc.assert(
      fc.property(fc.array(seeds, { minLength: 1, maxLength: 4 }), fc.constantFrom('logit-tree', 'packed-4d', 'naive-compressed'), (list, method) => {
        const sequences = list.flatMap((seed) => buildPlan(treeOf(seed, 'small'), method).sequences);
        const batch = packBatch(sequences);
        const n = batch.ids.length;
        expect(batch.offsets[sequences.length]).toBe(n);
        expect(batch.targets).toHaveLength(sequences.reduce((c, s) => c + s.targets.length, 0));
        sequences.forEach((s, b) => {
          const o = batch.offsets[b];
          for (let k = 0; k < s.ids.length; k++) {
            // A key is visible only inside its own block, and exactly as in its own sequence.
            if (batch.end[o + k] !== s.end[k] + o || batch.end[o + k] > batch.offsets[b + 1]) fail(`end of block ${b} at ${k}`);
            if (batch.ids[o + k] !== s.ids[k] || batch.tokens[o + k] !== s.tokens[k] || batch.positions[o + k] !== s.positions[k]) fail(`copy of block ${b}`);
          }
        });
        for (const t of batch.targets) {
          const src = sequences[t.sequence];
          const o = batch.offsets[t.sequence];
          const own = src.targets.find((x) => x.index === t.index - o) ?? fail('target lost');
          if (t.predictor !== own.predictor + o || t.id !== own.id || t.token !== own.token) fail('target not shifted');
          const keys = visibleKeys(batch.end, t.index);
          if (keys[0] < o) fail(`target ${t.id} of block ${t.sequence} sees index ${keys[0]} of an earlier block`);
          sameIds(
            keys.map((k) => k - o),
            visibleKeys(src.end, own.index),
            `visibility of ${t.id} in the batch`,
          );
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
