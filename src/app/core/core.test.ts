// The UI's mapping of the core, on the worked example (docs/tree.md) parsed and derived by the real core.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseRolloutFile } from '../../rollout';
import { buildStaircase, rowLiveIds } from './staircaseModel';
import { buildTreeModel } from './treeModel';
import { CELL } from './cells';
import { methodViews } from './methodViews';
import { buildViewData, defaultTarget, finalPrefixText, targetFacts } from './viewData';
import { WORKED_EXAMPLE_FIGURES } from '../../testing/fixtures';

const text = readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8');
const view = buildViewData(parseRolloutFile(text, 'worked-example.json')[0]);

describe('view data of the worked example', () => {
  it('carries the section-3 figures', () => {
    expect(view.tree.figures).toEqual(WORKED_EXAMPLE_FIGURES);
  });
  it('classes tokens for the views (inserted summary 9, 10)', () => {
    expect(Array.from(view.tape.cls)).toEqual([1, 1, 3, 3, 2, 2, 2, 3, 3, 4, 4, 2, 2, 3, 3, 3, 3]);
    expect(view.insertedBy[9]).toBe(1);
    expect(view.insertedBy[11]).toBe(0);
  });
  it('reports target 13 as the inspector shows it', () => {
    expect(targetFacts(view, 13)).toMatchObject({
      segment: 1,
      dropped: false,
      diverging: true,
      evictionMass: 4,
      livePrefixLength: 8,
      finalPrefixLength: 4,
      fullPrefixLength: 13,
      rolloutLogprob: -0.75,
    });
    expect(targetFacts(view, 2)).toMatchObject({ dropped: true, evictionMass: null, finalPrefixLength: null });
    // The inspector's cell: a length, or for a dropped target words, never a literal null.
    expect(finalPrefixText(targetFacts(view, 13)).text).toBe('4');
    expect(finalPrefixText(targetFacts(view, 2)).text).toBe('none: dropped');
    expect(defaultTarget(view)).toBe(13);
  });
  it('staircase rows equal the core live prefixes (as sets) for every target', () => {
    const model = buildStaircase(view.tape, 'step');
    view.rollout.targets.forEach((t, row) => {
      expect(rowLiveIds(model, row)).toEqual(Array.from(view.tree.livePrefix(t)).sort((a, b) => a - b));
    });
  });
  it('the tree view-model collapses the packed trie into five edges with copies 7′ 8′ 13′ 14′', () => {
    const model = buildTreeModel(view.trie);
    expect(model.edges.map((e) => e.label)).toEqual(['0,1', '2–8', '9,10', '7′,8′ 11–14', '13′,14′ 15,16']);
    expect(model.edges[1].from).toBe(2);
    expect(CELL.target).toBe(6);
  });
});

describe('what each method shows a target, read off the plans', () => {
  const byMethod = (id: number) => Object.fromEntries(methodViews(view, id).map((v) => [v.method, v]));
  it('target 13: compressed leaks (4 missing), full revives (5 stale), exact methods see the live prefix', () => {
    const m = byMethod(13);
    expect(Array.from(m['naive-compressed'].prefix!)).toEqual([0, 1, 9, 10]);
    expect(m['naive-compressed']).toMatchObject({ missing: 4, stale: 0, future: 0, exact: false });
    expect(Array.from(m['naive-full'].prefix!)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(m['naive-full']).toMatchObject({ missing: 0, stale: 5, future: 0, exact: false });
    for (const exact of ['logit-tree', 'packed-4d']) {
      expect(Array.from(m[exact].prefix!)).toEqual([0, 1, 9, 10, 7, 8, 11, 12]);
      expect(m[exact].exact).toBe(true);
    }
    expect(Array.from(m.sdcc.prefix!)).toEqual([0, 1, 9, 10]);
    expect(Array.from(m.sdcc.teacher!)).toEqual([0, 1, 9, 10, 7, 8, 11, 12]);
  });
  it('target 8 is dropped by the compressed walk; target 15 is exact everywhere but naive-full', () => {
    const dropped = byMethod(8);
    expect(dropped['naive-compressed'].prefix).toBeNull();
    expect(dropped.sdcc.prefix).toBeNull();
    const m = byMethod(15);
    expect(m['naive-compressed'].exact).toBe(true);
    expect(m.sdcc.teacher).toBeNull();
    expect(m['naive-full'].exact).toBe(false);
  });
});
