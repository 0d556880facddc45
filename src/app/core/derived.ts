// A rollout's view data as the rollout worker derives it for the page: the conditioning tree, the
// per-view inputs, the five scoring plans, the three masks and the tree view's model, as plain objects and typed arrays
// (structured-clone friendly, the arrays transferred, never copied). The page puts the tree's
// prefixes back (withPrefixes) and seeds the plan, mask and tree-model caches, so no view derives anything of
// its own on the main thread and every figure is the one buildViewData's functions give.
import { getTokenizer, type Rollout } from '../../rollout';
import { METHODS, type Method, type Plan } from '../../plan';
import { withPrefixes, type ConditioningTreeData } from '../../tree';
import { MASK_METHODS, maskOf, seedMasks, type MaskMethod, type MaskModel } from './maskModel';
import { planIndex, seedPlans } from './methodViews';
import { seedTreeModel, treeModelOf, type TreeModel } from './treeModel';
import { buildViewData, type ViewData } from './viewData';

export interface DerivedView {
  /** ViewData without its functions: the tree's data (no prefixes), no tokenizer. */
  view: Omit<ViewData, 'tree' | 'tokenizer'> & { tree: ConditioningTreeData };
  plans: Record<Method, Plan>;
  masks: Record<MaskMethod, MaskModel>;
  /** The tree view's layout model (its `trie` is view.trie, one object after the clone too). */
  treeModel: TreeModel;
}

/** Everything the views read of `rollout`, derived ahead (in the rollout worker). */
export function deriveView(rollout: Rollout): DerivedView {
  const full = buildViewData(rollout);
  const plans = Object.fromEntries(METHODS.map((m) => [m, planIndex(full, m).plan])) as Record<Method, Plan>;
  const masks = Object.fromEntries(MASK_METHODS.map((m) => [m, maskOf(full, m)])) as Record<MaskMethod, MaskModel>;
  const { tokenizer: _tokenizer, tree, ...parts } = full;
  const { branchIds: _b, livePrefix: _l, finalPrefix: _f, fullPrefix: _p, ...treeData } = tree;
  return { view: { ...parts, tree: treeData }, plans, masks, treeModel: treeModelOf(full.trie) };
}

/**
 * A rollout and its derived view as named parts, in the order the worker posts them (protocol/split.ts):
 * the page takes each in its own task. The masks share the plans' arrays, the view and the tree model
 * the trie, the view the rollout: each is sent once, in the first part that holds it.
 */
export function derivedParts(rollout: Rollout, derived: DerivedView): [string, unknown][] {
  return [
    ['rollout', rollout],
    ['view', derived.view],
    ['treeModel', derived.treeModel],
    ['masks', derived.masks],
    ...METHODS.map((m): [string, unknown] => [`plan:${m}`, derived.plans[m]]),
  ];
}

/** The rollout and its derived view from the parts of derivedParts, joined. */
export function fromParts(values: Record<string, unknown>): { rollout: Rollout; derived: DerivedView } {
  const plans = Object.fromEntries(METHODS.map((m) => [m, values[`plan:${m}`]])) as Record<Method, Plan>;
  const derived = { view: values.view, treeModel: values.treeModel, masks: values.masks, plans } as DerivedView;
  return { rollout: values.rollout as Rollout, derived };
}

/** The page's ViewData from what the worker derived (the rollout's tokenizer must be loaded). */
export function viewDataOf(derived: DerivedView): ViewData {
  const { view: parts, plans, masks, treeModel } = derived;
  const view: ViewData = { ...parts, tree: withPrefixes(parts.tree), tokenizer: getTokenizer(parts.rollout.tokenizer) };
  seedPlans(view, plans);
  seedMasks(view, masks);
  seedTreeModel(treeModel);
  return view;
}

/**
 * The buffers of every typed array reachable from `value` (each once), to transfer with it; objects
 * in `skip` are not searched (a rollout whose events the worker's set still holds).
 */
export function buffersOf(value: unknown, skip: readonly object[] = []): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  const seen = new Set<object>(skip);
  const visit = (item: unknown): void => {
    if (item === null || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (ArrayBuffer.isView(item)) {
      if (item.buffer instanceof ArrayBuffer) buffers.add(item.buffer);
    } else if (Array.isArray(item)) for (const x of item) visit(x);
    else for (const x of Object.values(item)) visit(x);
  };
  visit(value);
  return [...buffers];
}
