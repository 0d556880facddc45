// The rollout worker's derivation (core/derived.ts: tree, view inputs, plans, masks, the tree view's model,
// then the parts it posts) on the rollouts that froze the page (issue 31, src/testing/evicting.ts: K edits each
// evicting one token, N_packed ≈ K²), stage by stage, at N_packed 250k, 500k, 1M and 2M. It must grow about
// linearly in N_packed: the last column is the whole derivation's time per packed node, which stays flat.
// Run: npm run bench -- derive   (or node --expose-gc --import ./scripts/register.mjs bench/derive.ts [--edits 500,707,1000,1414])
import { loadavg } from 'node:os';
import { validateRollout } from '../src/rollout';
import { deriveTree } from '../src/tree';
import { METHODS, type Method, type Plan } from '../src/plan';
import { derivedParts } from '../src/app/core/derived';
import { MASK_METHODS, maskOf, type MaskMethod, type MaskModel } from '../src/app/core/maskModel';
import { planIndex } from '../src/app/core/methodViews';
import { buildTreeModel } from '../src/app/core/treeModel';
import { buildViewData } from '../src/app/core/viewData';
import { splitParts } from '../src/app/protocol/split';
import { evictingRollout } from '../src/testing/evicting';

const args = process.argv.slice(2);
const EDITS = (args.includes('--edits') ? args[args.indexOf('--edits') + 1] : '500,707,1000,1414').split(',').map(Number);

const gc = (globalThis as { gc?: () => void }).gc;
console.log(
  `bench/derive: load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} (1, 5, 15 min)`,
);
console.log('K edits · N_packed · tree · view · plans · masks · tree model · parts · total · µs per packed node');
for (const K of EDITS) {
  gc?.();
  const rollout = validateRollout(JSON.parse(evictingRollout(K)), { file: 'evict.json' });
  const times: number[] = [];
  let last = performance.now();
  const lap = () => {
    const now = performance.now();
    times.push(now - last);
    last = now;
  };
  const tree = deriveTree(rollout);
  lap();
  const view = buildViewData(rollout, tree);
  lap();
  const plans = Object.fromEntries(METHODS.map((m) => [m, planIndex(view, m).plan])) as Record<Method, Plan>;
  lap();
  const masks = Object.fromEntries(MASK_METHODS.map((m) => [m, maskOf(view, m)])) as Record<MaskMethod, MaskModel>;
  lap();
  const treeModel = buildTreeModel(view.trie);
  lap();
  const { tokenizer: _t, tree: full, ...parts } = view;
  const { branchIds: _b, livePrefix: _l, finalPrefix: _f, fullPrefix: _p, ...treeData } = full;
  splitParts(derivedParts(rollout, { view: { ...parts, tree: treeData }, plans, masks, treeModel }));
  lap();
  const N = tree.figures.packedLength;
  const total = times.reduce((a, b) => a + b, 0);
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  console.log(`${K} · ${N.toLocaleString('en')} · ${times.map(s).join(' · ')} · ${s(total)} · ${((total * 1000) / N).toFixed(2)} µs`);
}
