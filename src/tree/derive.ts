// deriveTree: a validated rollout to its conditioning tree. One replay of the events (as runs)
// gives the K+1 branches and each id's position in its own branch; the final walk gives final
// positions; eviction mass counts live-prefix ids that survive into the final walk, run by run.

import { applyEdit, pushRun, emptyRuns, runsToIds, type EditPiece, type Runs } from '../rollout/live-view';
import type { Rollout } from '../rollout/rollout';
import { buildPackedTrie, packedLengthOf } from './trie';
import type { ConditioningTree, ConditioningTreeData, EditInfo, TargetColumns, TargetFacts, TreeFigures } from './types';

interface Replay {
  branches: Runs[];
  edits: EditInfo[];
  /** Per target (index into rollout.targets): its position in its own branch. */
  targetPosition: Int32Array;
  /** Per id, when asked for (the whole tree): its position in its own branch. */
  ownPosition: Int32Array | null;
}

/** One replay of the events as runs; per-id positions only when `perId` (per-target facts need the targets' alone). */
function replay(rollout: Rollout, perId: boolean): Replay {
  const { targets } = rollout;
  const ownPosition = perId ? new Int32Array(rollout.length) : null;
  const targetPosition = new Int32Array(targets.length);
  const branches: Runs[] = [];
  const edits: EditInfo[] = [];
  let view: Runs = emptyRuns();
  let t = 0; // targets are ascending and lie in appends: the next one is in this append or a later one
  rollout.events.forEach((event, e) => {
    if (event.op === 'append') {
      if (ownPosition) for (let i = 0; i < event.count; i++) ownPosition[event.first + i] = view.length + i;
      for (; t < targets.length && targets[t] < event.first + event.count; t++) targetPosition[t] = view.length + targets[t] - event.first;
      pushRun(view, event.first, event.count);
      return;
    }
    branches.push(view);
    const pieces: EditPiece[] = event.view.map((p) => ('keep' in p ? { keep: p.keep } : { insert: { first: p.insert.first, count: p.insert.count } }));
    const outcome = applyEdit(view, pieces);
    if (!outcome.ok) throw new Error(`deriveTree: rollout ${rollout.id} was not validated (event ${e}: ${outcome.reason})`);
    let position = 0;
    let first = -1;
    let count = 0;
    for (const p of pieces) {
      if ('keep' in p) position += p.keep[1] - p.keep[0];
      else {
        if (first < 0) first = p.insert.first;
        count += p.insert.count;
        if (ownPosition) for (let i = 0; i < p.insert.count; i++) ownPosition[p.insert.first + i] = position + i;
        position += p.insert.count;
      }
    }
    edits.push({ edit: event.edit, event: e, evicted: outcome.result.evicted, inserted: { first: Math.max(first, 0), count } });
    view = outcome.result.view;
  });
  branches.push(view);
  return { branches, edits, targetPosition, ownPosition };
}

/**
 * Lookups in a view by physical id without a per-id array (a tape of millions of ids needs none):
 * its runs sorted by first id, with their live positions and the ids before them.
 */
function createRunIndex(view: Runs) {
  const R = view.starts.length;
  const runPosition: number[] = new Array(R);
  const order: number[] = new Array(R);
  for (let r = 0, p = 0; r < R; r++) {
    runPosition[r] = p;
    p += view.lengths[r];
    order[r] = r;
  }
  order.sort((x, y) => view.starts[x] - view.starts[y]);
  const starts: number[] = new Array(R);
  const lengths: number[] = new Array(R);
  const position: number[] = new Array(R);
  const idsBefore: number[] = new Array(R + 1);
  idsBefore[0] = 0;
  for (let j = 0; j < R; j++) {
    const r = order[j];
    starts[j] = view.starts[r];
    lengths[j] = view.lengths[r];
    position[j] = runPosition[r];
    idsBefore[j + 1] = idsBefore[j] + view.lengths[r];
  }
  /** The last sorted run starting at or before `id`, -1 for none. */
  const runOf = (id: number) => {
    let lo = 0;
    let hi = R - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] <= id) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  return {
    /** The id's position in the view, -1 when absent. */
    positionOf(id: number): number {
      const j = runOf(id);
      return j >= 0 && id < starts[j] + lengths[j] ? position[j] + id - starts[j] : -1;
    },
    /** The number of ids below `id` in the view. */
    countBelow(id: number): number {
      const j = runOf(id - 1);
      return j < 0 ? 0 : idsBefore[j] + Math.min(lengths[j], id - starts[j]);
    },
  };
}

/**
 * Per-target facts from the replay, indexed like rollout.targets: final positions, dropped
 * targets, eviction mass, divergence; and the figures. Memory follows the targets and the final
 * walk's runs, not the tape.
 */
function targetFacts(rollout: Rollout, { branches, targetPosition }: Replay): { byTarget: TargetColumns; figures: (packedLength: number) => TreeFigures } {
  const K = rollout.K;
  const { targets, segments } = rollout;
  const T = targets.length;
  const final = createRunIndex(branches[K]);
  const finalPosition = new Int32Array(T);
  const dropped = new Uint8Array(T);
  const evictionMass = new Int32Array(T).fill(-1);
  const diverging = new Uint8Array(T);
  // Targets are grouped by segment and, within one, ordered by position in their branch.
  for (let i = 0; i < T; ) {
    const k = segments[targets[i]];
    const branch = branches[k];
    let r = 0;
    let before = 0; // ids of branch runs 0..r-1
    let survived = 0; // of those, ids in the final walk
    for (; i < T && segments[targets[i]] === k; i++) {
      const t = targets[i];
      const p = targetPosition[i];
      finalPosition[i] = final.positionOf(t);
      if (finalPosition[i] <= 0) {
        dropped[i] = 1;
        continue;
      }
      while (before + branch.lengths[r] <= p) {
        survived += final.countBelow(branch.starts[r] + branch.lengths[r]) - final.countBelow(branch.starts[r]);
        before += branch.lengths[r++];
      }
      const inPrefix = survived + final.countBelow(branch.starts[r] + p - before) - final.countBelow(branch.starts[r]);
      evictionMass[i] = p - inPrefix;
      diverging[i] = evictionMass[i] > 0 || finalPosition[i] !== p ? 1 : 0;
    }
  }

  let droppedCount = 0;
  let massTotal = 0;
  let massMax = 0;
  let leaves = 0;
  for (let i = 0; i < T; i++) {
    if (dropped[i]) droppedCount++;
    else {
      massTotal += evictionMass[i];
      massMax = Math.max(massMax, evictionMass[i]);
      leaves += diverging[i];
    }
  }
  /** The figures, given N_packed. */
  const figures = (packedLength: number): TreeFigures => ({
    K,
    branches: K + 1,
    physicalLength: rollout.length,
    finalWalkLength: branches[K].length,
    packedLength,
    targets: T,
    droppedTargets: droppedCount,
    divergingLeaves: leaves,
    evictionMassTotal: massTotal,
    evictionMassMax: massMax,
  });
  return { byTarget: { ownPosition: targetPosition, finalPosition, dropped, evictionMass, diverging }, figures };
}

/**
 * The section-3 figures alone: N_packed is counted, the trie is not laid out, so memory follows
 * the targets and the branches' runs, not the tape or N_packed (`mw tree` without --per-target).
 */
export function deriveFigures(rollout: Rollout): TreeFigures {
  const facts = replay(rollout, false);
  return targetFacts(rollout, facts).figures(packedLengthOf(facts.branches));
}

/**
 * N_packed alone, from the events: one replay as runs and the trie's phase 1 counted, never laid
 * out (src/plan/size.ts checks a rollout's plan sizes with it before any tree is built).
 */
export function packedLength(rollout: Rollout): number {
  return packedLengthOf(replay(rollout, false).branches);
}

/**
 * What `mw tree --per-target` prints, without the trie: the branches, each target's positions,
 * eviction mass and divergence, and the figures (N_packed counted). Memory as for deriveFigures.
 */
export function deriveTargetFacts(rollout: Rollout): TargetFacts {
  const replayed = replay(rollout, false);
  const { byTarget, figures } = targetFacts(rollout, replayed);
  return { rollout, K: rollout.K, figures: figures(packedLengthOf(replayed.branches)), branches: replayed.branches, targets: rollout.targets, byTarget };
}

export function deriveTree(rollout: Rollout): ConditioningTree {
  const L = rollout.length;
  const K = rollout.K;
  const { targets, segments } = rollout;
  const replayed = replay(rollout, true);
  const { branches, edits } = replayed;
  const ownPosition = replayed.ownPosition as Int32Array;
  const { byTarget, figures: figuresFor } = targetFacts(rollout, replayed);
  const finalWalk = runsToIds(branches[K]);
  const finalPosition = new Int32Array(L).fill(-1);
  finalWalk.forEach((id, p) => (finalPosition[id] = p));
  // The per-target columns spread over ids (-1 / 0 elsewhere), as the views and plans read them.
  const dropped = new Uint8Array(L);
  const evictionMass = new Int32Array(L).fill(-1);
  const diverging = new Uint8Array(L);
  const leaves: number[] = [];
  targets.forEach((t, i) => {
    dropped[t] = byTarget.dropped[i];
    evictionMass[t] = byTarget.evictionMass[i];
    diverging[t] = byTarget.diverging[i];
    if (diverging[t] && !dropped[t]) leaves.push(t);
  });
  const trie = buildPackedTrie(branches);
  const scoringNode = new Int32Array(L).fill(-1);
  for (const t of targets) {
    const k = segments[t];
    scoringNode[t] = trie.chainStart[k] + ownPosition[t] - trie.sharedLength[k];
  }
  return withPrefixes({
    ...trie,
    rollout,
    K,
    figures: figuresFor(trie.packedOrder.length),
    branches,
    edits,
    finalWalk,
    finalPosition,
    ownPosition,
    targets,
    byTarget,
    dropped,
    evictionMass,
    diverging,
    divergingLeaves: Int32Array.from(leaves),
    scoringNode,
  });
}

/**
 * The tree with its prefixes, from its data: what deriveTree returns, and what the page makes of
 * the data the rollout worker derived and posted (functions do not cross to the page).
 */
export function withPrefixes(data: ConditioningTreeData): ConditioningTree {
  const { rollout, branches, ownPosition, finalPosition, finalWalk } = data;
  const L = rollout.length;
  const checkId = (id: number) => {
    if (!Number.isInteger(id) || id < 0 || id >= L) throw new RangeError(`no physical id ${id} in rollout ${rollout.id} (L = ${L})`);
  };
  return {
    ...data,
    branchIds: (k) => runsToIds(branches[k]),
    livePrefix(id) {
      checkId(id);
      return runsToIds(branches[rollout.segments[id]], ownPosition[id]);
    },
    finalPrefix(id) {
      checkId(id);
      return finalPosition[id] <= 0 ? null : finalWalk.slice(0, finalPosition[id]);
    },
    fullPrefix(id) {
      checkId(id);
      return Int32Array.from({ length: id }, (_, i) => i);
    },
  };
}
