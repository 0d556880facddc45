// The derived view posted in parts (splitParts) and joined on the page (createJoiner), each part
// through structuredClone with its transfer list as postMessage sends it: every array arrives once,
// objects shared between parts are one object again, and the values equal the worker's.
import { describe, expect, it } from 'vitest';
import { validateRollout } from '../../rollout';
import { evictingRollout } from '../../testing/evicting';
import { deriveView, derivedParts, fromParts, viewDataOf } from '../core/derived';
import { planIndex } from '../core/methodViews';
import { maskOf } from '../core/maskModel';
import { treeModelOf } from '../core/treeModel';
import { createJoiner, splitParts, type SplitPart } from './split';

/** Each part as the page receives it: cloned, its buffers transferred (detached on the sending side). */
function post(entries: [string, unknown][]): SplitPart[] {
  return splitParts(entries).map(({ part, transfer }) => structuredClone(part, { transfer }));
}

describe('a value posted in parts', () => {
  it('a derived rollout (N_packed 400): nine parts, each array sent once, shared objects joined, the same figures', () => {
    const text = evictingRollout(20, 'parts');
    const rollout = validateRollout(JSON.parse(text), { file: 'parts.json' });
    const derived = deriveView(rollout);
    // The worker's own copy, to compare with after its buffers have moved.
    const expected = deriveView(validateRollout(JSON.parse(text), { file: 'parts.json' }));
    const parts = post(derivedParts(rollout, derived));
    expect(parts.map((p) => p.key)).toEqual([
      'rollout',
      'view',
      'treeModel',
      'masks',
      'plan:naive-compressed',
      'plan:naive-full',
      'plan:logit-tree',
      'plan:packed-4d',
      'plan:sdcc',
    ]);
    // Moved, not copied: the worker's arrays are detached.
    expect(rollout.tokens.length).toBe(0);
    expect(derived.treeModel.edgeOf.length).toBe(0);
    // Arrays the view holds (the trie's) are not sent again with the tree model; the masks hold the plans' arrays first.
    const arrays = parts.reduce((n, p) => n + p.arrays.length, 0);
    const distinct = new Set<ArrayBufferView>();
    const visit = (v: unknown, seen = new Set<object>()): void => {
      if (v === null || typeof v !== 'object' || seen.has(v)) return;
      seen.add(v);
      if (ArrayBuffer.isView(v)) distinct.add(v);
      else for (const x of Object.values(v)) visit(x, seen);
    };
    visit({ rollout: expected.view.rollout, ...expected });
    expect(arrays).toBe(distinct.size);
    expect(parts[2].links).toContain('o view/trie treeModel/trie');

    const joiner = createJoiner();
    for (const part of parts) joiner.add(part);
    const joined = fromParts(joiner.values());
    expect(joined.derived.view.rollout).toBe(joined.rollout);
    expect(joined.derived.view.tree.rollout).toBe(joined.rollout);
    expect(joined.derived.treeModel.trie).toBe(joined.derived.view.trie);
    const packed = joined.derived.plans['packed-4d'];
    expect(packed.method !== 'sdcc' && joined.derived.masks['packed-4d'].end).toBe(packed.method !== 'sdcc' && packed.sequences[0].end);
    expect(joined.derived.masks['packed-4d'].segment).toBe(joined.rollout.segments);
    expect(joined.derived).toEqual(expected);

    // The page's view from the joined parts: the seeded caches hold the posted models.
    const view = viewDataOf(joined.derived);
    expect(treeModelOf(view.trie)).toBe(joined.derived.treeModel);
    expect(maskOf(view, 'packed-4d').n).toBe(400);
    expect(planIndex(view, 'sdcc').plan).toBe(joined.derived.plans.sdcc);
    expect(view.tree.livePrefix(39).length).toBe(view.tree.ownPosition[39]);
  });

  it('names any property, sends a second view of one buffer as a copy, and refuses what is not plain data', () => {
    const buffer = new ArrayBuffer(16);
    const whole = new Int32Array(buffer);
    whole.set([1, 2, 3, 4]);
    const tail = new Int32Array(buffer, 8, 2);
    const shared = { n: 1 };
    const parts = post([
      ['a', { whole, extra: { 'a/b c': [shared], '50%\n': 2 } }],
      ['b', { tail, again: shared, same: whole }],
    ]);
    const joiner = createJoiner();
    for (const part of parts) joiner.add(part);
    const { a, b } = joiner.values() as { a: { whole: Int32Array; extra: Record<string, unknown> }; b: { tail: Int32Array; again: object; same: Int32Array } };
    expect(Array.from(a.whole)).toEqual([1, 2, 3, 4]);
    expect(Array.from(b.tail)).toEqual([3, 4]);
    expect(b.same).toBe(a.whole);
    expect(a.extra['50%\n']).toBe(2);
    expect((a.extra['a/b c'] as object[])[0]).toBe(b.again);
    expect(() => splitParts([['m', { map: new Map() }]])).toThrow('splitParts: m/map is a Map, not plain data');
  });
});
