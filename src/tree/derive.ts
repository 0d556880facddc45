// deriveTree: a validated rollout to its conditioning tree. One replay of the events (as runs)
// gives the K+1 branches and each id's position in its own branch; the final walk gives final
// positions; eviction mass counts live-prefix ids that survive into the final walk, run by run.

import { applyEdit, pushRun, emptyRuns, runsToIds, type EditPiece, type Runs } from '../rollout/live-view';
import type { Rollout } from '../rollout/rollout';
import { buildPackedTrie, packedLengthOf } from './trie';
import type { ConditioningTree, ConditioningTreeData, EditInfo, TargetFacts, TreeFigures } from './types';

interface Replay {
  branches: Runs[];
  edits: EditInfo[];
  ownPosition: Int32Array;
}

function replay(rollout: Rollout): Replay {
  const ownPosition = new Int32Array(rollout.length);
  const branches: Runs[] = [];
  const edits: EditInfo[] = [];
  let view: Runs = emptyRuns();
  rollout.events.forEach((event, e) => {
    if (event.op === 'append') {
      for (let i = 0; i < event.count; i++) ownPosition[event.first + i] = view.length + i;
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
        for (let i = 0; i < p.insert.count; i++) ownPosition[p.insert.first + i] = position++;
      }
    }
    edits.push({ edit: event.edit, event: e, evicted: outcome.result.evicted, inserted: { first: Math.max(first, 0), count } });
    view = outcome.result.view;
  });
  branches.push(view);
  return { branches, edits, ownPosition };
}

/** Per-target facts from the replay: final positions, dropped targets, eviction mass, divergence. */
function targetFacts(rollout: Rollout, { branches, ownPosition }: Replay) {
  const L = rollout.length;
  const K = rollout.K;
  const finalWalk = runsToIds(branches[K]);
  const finalPosition = new Int32Array(L).fill(-1);
  finalWalk.forEach((id, p) => (finalPosition[id] = p));
  // inFinalBefore[x] = number of ids < x that are in the final walk.
  const inFinalBefore = new Int32Array(L + 1);
  for (let x = 0; x < L; x++) inFinalBefore[x + 1] = inFinalBefore[x] + (finalPosition[x] >= 0 ? 1 : 0);

  const { targets, segments } = rollout;
  const dropped = new Uint8Array(L);
  const evictionMass = new Int32Array(L).fill(-1);
  const diverging = new Uint8Array(L);
  // Targets are grouped by segment and, within one, ordered by position in their branch.
  for (let i = 0; i < targets.length; ) {
    const k = segments[targets[i]];
    const branch = branches[k];
    let r = 0;
    let before = 0; // ids of branch runs 0..r-1
    let survived = 0; // of those, ids in the final walk
    for (; i < targets.length && segments[targets[i]] === k; i++) {
      const t = targets[i];
      const p = ownPosition[t];
      if (finalPosition[t] <= 0) {
        dropped[t] = 1;
        continue;
      }
      while (before + branch.lengths[r] <= p) {
        survived += inFinalBefore[branch.starts[r] + branch.lengths[r]] - inFinalBefore[branch.starts[r]];
        before += branch.lengths[r++];
      }
      const inPrefix = survived + inFinalBefore[branch.starts[r] + p - before] - inFinalBefore[branch.starts[r]];
      evictionMass[t] = p - inPrefix;
      diverging[t] = evictionMass[t] > 0 || finalPosition[t] !== p ? 1 : 0;
    }
  }

  let droppedCount = 0;
  let massTotal = 0;
  let massMax = 0;
  const leaves: number[] = [];
  for (const t of targets) {
    if (dropped[t]) droppedCount++;
    else {
      massTotal += evictionMass[t];
      massMax = Math.max(massMax, evictionMass[t]);
      if (diverging[t]) leaves.push(t);
    }
  }
  /** The figures, given N_packed. */
  const figures = (packedLength: number): TreeFigures => ({
    K,
    branches: K + 1,
    physicalLength: L,
    finalWalkLength: finalWalk.length,
    packedLength,
    targets: targets.length,
    droppedTargets: droppedCount,
    divergingLeaves: leaves.length,
    evictionMassTotal: massTotal,
    evictionMassMax: massMax,
  });
  return { finalWalk, finalPosition, dropped, evictionMass, diverging, leaves, figures };
}

/**
 * The section-3 figures alone: N_packed is counted, the trie is not laid out, so memory follows
 * the tape and the branches' runs, not N_packed (`mw tree` without --per-target).
 */
export function deriveFigures(rollout: Rollout): TreeFigures {
  const facts = replay(rollout);
  return targetFacts(rollout, facts).figures(packedLengthOf(facts.branches));
}

/**
 * N_packed alone, from the events: one replay as runs and the trie's phase 1 counted, never laid
 * out (src/plan/size.ts checks a rollout's plan sizes with it before any tree is built).
 */
export function packedLength(rollout: Rollout): number {
  return packedLengthOf(replay(rollout).branches);
}

/**
 * What `mw tree --per-target` prints, without the trie: the branches, each target's positions,
 * eviction mass and divergence, and the figures (N_packed counted). Memory as for deriveFigures.
 */
export function deriveTargetFacts(rollout: Rollout): TargetFacts {
  const replayed = replay(rollout);
  const { finalPosition, dropped, evictionMass, diverging, figures } = targetFacts(rollout, replayed);
  return {
    rollout,
    K: rollout.K,
    figures: figures(packedLengthOf(replayed.branches)),
    branches: replayed.branches,
    targets: rollout.targets,
    ownPosition: replayed.ownPosition,
    finalPosition,
    dropped,
    evictionMass,
    diverging,
  };
}

export function deriveTree(rollout: Rollout): ConditioningTree {
  const L = rollout.length;
  const K = rollout.K;
  const { targets, segments } = rollout;
  const replayed = replay(rollout);
  const { branches, edits, ownPosition } = replayed;
  const { finalWalk, finalPosition, dropped, evictionMass, diverging, leaves, figures: figuresFor } = targetFacts(rollout, replayed);
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
