// What the rollout worker posts is what the page would have derived: deriveView's data, cloned as
// postMessage clones it (its buffers transferred), put back together by viewDataOf, gives every
// figure the views read (tree, prefixes, plans, masks, method views) exactly as buildViewData does.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METHODS } from '../../plan';
import { parseRolloutFile, validateRollout, type Rollout } from '../../rollout';
import { generateRandomRollout } from '../../rollout/generate-random';
import { evictingRollout } from '../../testing/evicting';
import { buffersOf, deriveView, viewDataOf } from './derived';
import { buildMask, MASK_METHODS, maskOf } from './maskModel';
import { methodViews, planIndex } from './methodViews';
import { buildTreeModel, treeModelOf } from './treeModel';
import { buildViewData, targetFacts, type ViewData } from './viewData';

const WORKED = readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8');

/** The page's side: the derived data as it arrives from the worker (a structured clone, arrays moved). */
function posted(rollout: Rollout): ViewData {
  const derived = deriveView(rollout);
  const transfer = buffersOf(derived);
  const arrived = structuredClone(derived, { transfer });
  expect(rollout.tokens.length, "the worker's arrays were moved, not copied").toBe(0);
  const view = viewDataOf(arrived);
  // The plans and masks arrived built: the page's caches hold the posted objects, nothing is rebuilt.
  for (const method of METHODS) expect(planIndex(view, method).plan).toBe(arrived.plans[method]);
  for (const method of MASK_METHODS) expect(maskOf(view, method)).toBe(arrived.masks[method]);
  expect(treeModelOf(view.trie)).toBe(arrived.treeModel);
  expect(arrived.treeModel.trie).toBe(view.trie);
  return view;
}

function expectSameViews(page: ViewData, local: ViewData): void {
  const { tree } = local;
  expect(page.tree.figures).toEqual(tree.figures);
  expect(page.tree.packedOrder).toEqual(tree.packedOrder);
  expect(page.tape).toEqual(local.tape);
  expect(page.trie).toEqual(local.trie);
  expect(page.insertedBy).toEqual(local.insertedBy);
  expect(page.textual).toBe(local.textual);
  for (let k = 0; k <= tree.K; k++) expect(page.tree.branchIds(k)).toEqual(tree.branchIds(k));
  for (const t of local.rollout.targets) {
    expect(page.tree.livePrefix(t)).toEqual(tree.livePrefix(t));
    expect(page.tree.finalPrefix(t)).toEqual(tree.finalPrefix(t));
    expect(targetFacts(page, t)).toEqual(targetFacts(local, t));
    expect(methodViews(page, t)).toEqual(methodViews(local, t));
  }
  for (const method of METHODS) expect(planIndex(page, method).plan).toEqual(planIndex(local, method).plan);
  for (const method of MASK_METHODS) expect(maskOf(page, method)).toEqual(buildMask(local, method));
  expect(treeModelOf(page.trie)).toEqual(buildTreeModel(local.trie));
}

describe('view data derived in the worker', () => {
  it('the worked example: the same tree, prefixes, plans, masks and method views as derived on the page', () => {
    const page = posted(parseRolloutFile(WORKED, 'worked-example.json')[0]);
    const local = buildViewData(parseRolloutFile(WORKED, 'worked-example.json')[0]);
    expect(page.tree.figures).toMatchObject({ K: 2, packedLength: 21, targets: 8, divergingLeaves: 2 });
    expectSameViews(page, local);
    expect(maskOf(page, 'packed-4d')).toMatchObject({ n: 21, totals: { targetRows: 8, missing: 0, stale: 0, future: 0 } });
  });

  it('generated rollouts with text, and a rollout whose edits each evict one token', () => {
    for (const seed of [3, 8]) {
      const json = generateRandomRollout({ seed, size: 'medium', textRate: 0.3 });
      expectSameViews(posted(validateRollout(json, { file: 'g.json' })), buildViewData(validateRollout(json, { file: 'g.json' })));
    }
    const evict = evictingRollout(12);
    const page = posted(parseRolloutFile(evict, 'e.json')[0]);
    expect(page.tree.figures.packedLength).toBe(144);
    expectSameViews(page, buildViewData(parseRolloutFile(evict, 'e.json')[0]));
  });

  it('moves each buffer once and leaves alone what it is told to skip', () => {
    const rollout = parseRolloutFile(WORKED, 'w.json')[0];
    const derived = deriveView(rollout);
    const buffers = buffersOf(derived);
    expect(new Set(buffers).size).toBe(buffers.length);
    expect(buffers).toContain(rollout.tokens.buffer);
    expect(buffers).toContain(derived.view.tree.packedOrder.buffer);
    expect(buffersOf(derived, [rollout])).not.toContain(rollout.tokens.buffer);
  });
});
