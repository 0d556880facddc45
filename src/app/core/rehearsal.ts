// The playground's edits rehearsed off the clock. A page runs a function slowly the first times it
// is called (the engine compiles it to fast code once it has run): on a 500-token rollout the first
// "slide window" after the playground opened spent ~11 ms building the tree model that a later one
// builds in 0.3 ms, and 70–80 ms of main-thread CPU in all against 40–55 ms. So when the playground
// opens, each kind of edit is made once on a copy, derived as a change derives it (validation, the
// conditioning tree, the view data) and modelled as the views model it (tree, masks, staircase,
// context panes and their jumps, inspector), one edit per idle moment, the results dropped. What
// stays cold for a student's first edit is the views' own drawing code (it runs when they draw).
import { validateRollout, type RolloutJson } from '../../rollout';
import { JUMP_KINDS, jumpsOf } from './contextFind';
import { buildPane, PANES } from './contextModel';
import { MASK_METHODS, maskOf } from './maskModel';
import { lanesOf, selectedViews } from './methodViews';
import {
  appendEventOf,
  appendPiece,
  evictSpan,
  foldLatestObservation,
  liveIds,
  playTokenizer,
  slideWindow,
  summarizeSpan,
  describeEvents,
  type PlayOutcome,
} from './playground';
import type { RowMode } from '../url/schema';
import { buildStaircase } from './staircaseModel';
import { methodOverlays } from './treeOverlay';
import { treeModelOf } from './treeModel';
import { buildViewData, defaultTarget, targetFacts } from './viewData';

/**
 * Each kind of playground edit, on `rollout`, as a step to run when the page is idle; a step says whether
 * its edit was accepted (a refused one derives nothing). None for a rollout of fewer than 4 live tokens.
 */
export function rehearsalSteps(rollout: RolloutJson, rows: RowMode): (() => boolean)[] {
  const n = liveIds(rollout).length;
  if (n < 4) return [];
  const span = { from: Math.floor(n / 3), to: Math.min(n - 2, Math.floor(n / 3) + 9) };
  const edits: ((r: RolloutJson) => PlayOutcome)[] = [
    (r) => slideWindow(r, Math.ceil(n / 2)),
    (r) => evictSpan(r, span),
    (r) => summarizeSpan(r, span, 'a summary'),
    (r) => foldLatestObservation(r, 'folded'),
    (r) => appendPiece(r, 'act', 'an action'),
  ];
  return edits.map((edit) => () => {
    const outcome = edit(rollout);
    if (outcome.ok) modelViews(outcome.rollout, rows);
    return outcome.ok;
  });
}

/** What a change computes before the views draw it, the results dropped. */
function modelViews(json: RolloutJson, rows: RowMode): void {
  const view = buildViewData(validateRollout(json, { file: 'rehearsal' }));
  const target = defaultTarget(view);
  const tree = treeModelOf(view.trie);
  for (const method of MASK_METHODS) maskOf(view, method);
  buildStaircase(view.tape, rows);
  for (const kind of JUMP_KINDS) jumpsOf(view, kind);
  liveIds(json);
  appendEventOf(json);
  const tokenizer = playTokenizer(json);
  describeEvents(json, (ids) => (typeof tokenizer === 'object' ? tokenizer.decode(ids) : ids.join(' ')));
  if (target === null) return;
  const views = selectedViews(view, target);
  if (views) {
    lanesOf(views);
    methodOverlays(tree, views, target);
  }
  targetFacts(view, target);
  for (const kind of PANES) buildPane(view, kind, target, { breakLines: true });
}
