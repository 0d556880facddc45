// Drift of each replay method (docs/metrics.md), from the model's scores of every target: against the
// exact live-prefix score (conditioning drift; LogitTree's scores, which Theorem 1 (docs/methods.md) makes
// the packed 4D mask's too) and against the rollout's own logprobs where they are this model's. SDCC
// needs no pass of its own: its student is the final walk (Naive-Compressed's scores) and its teacher
// the live prefix (LogitTree's rows), so its KL at the diverging leaves comes from the same pass.
import type { SamplingOptions } from '../../harness/policies/model';
import { signedDifferences, summarizeDrift, type DriftSummary } from '../../metrics/drift';
import { expectedTargetDrift, poolExpected, type MethodExpectedDrift } from '../../metrics/expected-drift';
import { forwardKlRow } from '../../gpu/kernels/kl-sdcc/kl-sdcc.reference';
import type { Rollout } from '../../rollout';
import type { DriftRow, MethodScores, ScoredMethod } from '../protocol/score';
import { tailRange } from './histogram';
import { driftVerdict, type DriftVerdict, type VerdictState } from '../../metrics/verdict';
import { METHOD_BY_ID } from '../../present/palette';
import { formatEffect } from '../../present/number';
import { byCost, editorSums, rolloutJunctions, type Junction } from '../../metrics/junctions';
import { SEQUENCE_METHODS, type SequenceMethod } from '../../plan/types';
import type { ConditioningTree } from '../../tree/types';
import { createReachTally, reachLines, type ReachReport } from '../../metrics/reach';

export { niceRange } from './histogram';

export interface MethodDrift {
  method: ScoredMethod;
  /** Why the method could not score this rollout, or null. */
  error: string | null;
  /** ℓ_m(t) by target id. */
  logprob: Map<number, number>;
  /** ℓ_m(t) − ℓ_live(t) by target id. */
  delta: Map<number, number>;
  /** The same differences in the method's order (what its histogram counts). */
  deltas: Float64Array;
  /** The V log-probabilities at each target's position, by target id (of every target when `rowsComplete`, else of the diverging leaves). */
  rows: Map<number, Float32Array>;
  /** Whether `rows` holds every scored target's (a large vocabulary keeps only the diverging leaves': ROWS_BUDGET_BYTES). */
  rowsComplete: boolean;
  vsLive: DriftSummary;
  /** Against the rollout's logprobs (any it has; whether they are this model's: `DriftData.logprobs`). */
  vsRollout: DriftSummary | null;
  /** Half-width of an axis that holds this method's drift but its outer 2 %. */
  ownRange: number;
  /** Its targets beyond the model's positions (not scored), and those scored on a window of their context. */
  outOfReach: number;
  windowed: number;
}

/**
 * Whose log-probabilities the rollout records, as far as the scores tell: this model's (the exact
 * methods reproduce them), none, a scripted policy's (every one exactly 0: the expert's), or another
 * policy's (the exact methods differ from them by more than OTHER_POLICY_LOGDIFF).
 */
export type LogprobSource =
  | { kind: 'model'; n: number; logdiff: number }
  | { kind: 'missing' }
  | { kind: 'zeros'; n: number }
  | { kind: 'other'; n: number; logdiff: number };

/**
 * Above this mean |ℓ_live − ℓ_rollout| the recorded logprobs are not taken as this model's. A serving
 * engine in bf16 sits near 0.014 (the paper's floor) and must still count as the model's own.
 */
export const OTHER_POLICY_LOGDIFF = 0.1;

export interface SdccDrift {
  /** Why SDCC cannot be shown (its student, Naive-Compressed, did not score), or null. */
  error: string | null;
  /** Targets the student scores (Naive-Compressed's). */
  n: number;
  /** KL(π(·|live prefix) ‖ π(·|final prefix)) at each diverging leaf, by id. */
  kl: Map<number, number>;
  /** KL_SDCC: the mean over the diverging leaves; 0 when there are none (its gating). */
  meanKl: number;
  /** Upper end of an axis that holds the KLs but their outer 2 %. */
  range: number;
}

export interface DriftData {
  rolloutId: string;
  /** ℓ_live(t): the exact live-prefix score. */
  live: Map<number, number>;
  /** The live-prefix log-probability rows of each target, by id (the distribution the policy sampled from). */
  liveRows: Map<number, Float32Array>;
  methods: MethodDrift[];
  sdcc: SdccDrift;
  logprobs: LogprobSource;
  /** Half-width of the shared axis (histograms on one axis, and the colour scale). */
  range: number;
  /** How far the model reached into the rollout, per method (null: not told, e.g. a data-set row's summary). */
  reach: ReachReport | null;
}

/** What drift needs of a rollout: its targets and logprobs, and its diverging leaves (ViewData has both). */
export interface DriftSubject {
  rollout: Pick<Rollout, 'id' | 'targets' | 'logprobs'>;
  tree: { divergingLeaves: ArrayLike<number> };
}

/** `reach`: the model's positions and the window the worker scored on (its `Scored` reply), for the panel's reach lines. */
export function driftOf(subject: DriftSubject, scores: MethodScores[], reach?: { positions: number; window: number | null }): DriftData {
  const { rollout: r, tree } = subject;
  const exact = scores.find((s) => s.method === 'logit-tree');
  if (!exact || 'error' in exact) {
    throw new Error(`cannot score ${r.id} under its live prefixes: ${exact && 'error' in exact ? `LogitTree ${exact.error}` : 'LogitTree was not scored'}`);
  }
  const live = new Map<number, number>();
  exact.ids.forEach((id, i) => live.set(id, exact.logprobs[i]));
  const recorded = new Map<number, number>();
  for (const t of r.targets) if (!Number.isNaN(r.logprobs[t])) recorded.set(t, r.logprobs[t]);

  const methods = scores.map((s): MethodDrift => {
    const logprob = new Map<number, number>();
    const rows = new Map<number, Float32Array>();
    if (!('error' in s)) {
      s.ids.forEach((id, i) => logprob.set(id, s.logprobs[i]));
      const rowIds = s.rowIds ?? s.ids;
      const V = rowIds.length ? s.rows.length / rowIds.length : 0;
      rowIds.forEach((id, i) => rows.set(id, s.rows.subarray(i * V, (i + 1) * V)));
    }
    const deltas = signedDifferences(logprob, live);
    const delta = new Map<number, number>();
    let i = 0;
    for (const id of logprob.keys()) if (live.has(id)) delta.set(id, deltas[i++]);
    return {
      method: s.method,
      error: 'error' in s ? s.error : null,
      logprob,
      delta,
      deltas,
      rows,
      rowsComplete: !('error' in s) && s.rowIds === undefined,
      vsLive: summarizeDrift(deltas),
      vsRollout: recorded.size ? summarizeDrift(signedDifferences(logprob, recorded)) : null,
      ownRange: tailRange([deltas]),
      outOfReach: 'error' in s ? 0 : (s.outOfReach ?? 0),
      windowed: 'error' in s ? 0 : (s.windowed ?? 0),
    };
  });
  let reached: ReachReport | null = null;
  if (reach) {
    const tally = createReachTally({ positions: reach.positions, ...(reach.window === null ? {} : { window: reach.window }) });
    for (const m of methods) if (!m.error) tally.add(m.method, m.logprob.size, { outOfReach: m.outOfReach, windowed: m.windowed });
    reached = tally.report();
  }
  const liveRows = methods.find((m) => m.method === 'logit-tree')!.rows;
  return {
    rolloutId: r.id,
    live,
    liveRows,
    methods,
    sdcc: sdccOf(
      tree.divergingLeaves,
      liveRows,
      methods.find((m) => m.method === 'naive-compressed'),
    ),
    logprobs: sourceOf(recorded, live),
    range: tailRange(methods.map((m) => m.deltas)),
    reach: reached,
  };
}

/** The panel's lines on how far the model reached: each method's targets beyond its positions, and whether the drift is windowed. */
export function reachNotes(drift: Pick<DriftData, 'reach'>): string[] {
  return drift.reach ? reachLines(drift.reach, { remedy: 'a window', label: (m) => METHOD_BY_ID[m].label }) : [];
}

function sourceOf(recorded: Map<number, number>, live: Map<number, number>): LogprobSource {
  if (!recorded.size) return { kind: 'missing' };
  let zeros = true;
  for (const v of recorded.values()) if (v !== 0) zeros = false;
  if (zeros) return { kind: 'zeros', n: recorded.size };
  const { n, logdiff } = summarizeDrift(signedDifferences(live, recorded));
  return { kind: logdiff > OTHER_POLICY_LOGDIFF ? 'other' : 'model', n, logdiff };
}

function sdccOf(leaves: ArrayLike<number>, liveRows: Map<number, Float32Array>, student: MethodDrift | undefined): SdccDrift {
  if (!student || student.error) {
    return { error: `its student, Naive-Compressed, ${student?.error ?? 'was not scored'}`, n: 0, kl: new Map(), meanKl: 0, range: tailRange([]) };
  }
  const kl = new Map<number, number>();
  for (let i = 0; i < leaves.length; i++) {
    const id = leaves[i];
    const teacher = liveRows.get(id);
    const row = student.rows.get(id);
    if (teacher && row) kl.set(id, forwardKlRow(teacher, 0, row, 0, teacher.length));
  }
  const values = Float64Array.from(kl.values());
  const meanKl = values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
  return { error: null, n: student.logprob.size, kl, meanKl, range: tailRange([values]) };
}

/** Whether the rollout's logprobs are a reference the methods can be compared with. */
export function comparesWithRollout(drift: DriftData): boolean {
  return drift.logprobs.kind === 'model';
}

/**
 * Per method, the signed drift a sampler should expect at the targets it scores (exact, from the live
 * and the method's log-probability rows; src/metrics/expected-drift.ts); null for a method that could
 * not score, or whose rows were not all kept (a large vocabulary's).
 */
export function expectedOf(drift: DriftData, sampling: SamplingOptions): Map<ScoredMethod, MethodExpectedDrift | null> {
  const out = new Map<ScoredMethod, MethodExpectedDrift | null>();
  const live = drift.methods.find((m) => m.method === 'logit-tree');
  for (const m of drift.methods) {
    if (m.error || !m.rowsComplete || !live?.rowsComplete) {
      out.set(m.method, null);
      continue;
    }
    const drifts: number[] = [];
    for (const [id, row] of m.rows) {
      const live = drift.liveRows.get(id);
      if (live) drifts.push(expectedTargetDrift(live, row, sampling));
    }
    out.set(m.method, poolExpected(drifts));
  }
  return out;
}

export type { DriftRow };

/**
 * One rollout's drift as a row of the data-set table: logdiff and μ per method, KL_SDCC and, given its tree,
 * its drift per edit summed per editor (what the table sums over the set).
 */
export function driftRow(drift: DriftData, tree?: ConditioningTree): DriftRow {
  const reference = comparesWithRollout(drift) ? 'rollout' : 'live';
  const methods = {} as DriftRow['methods'];
  for (const m of drift.methods) {
    const s = m.error ? null : reference === 'rollout' ? m.vsRollout : m.vsLive;
    methods[m.method] = s ? { logdiff: s.logdiff, mu: s.mu } : null;
  }
  const row: DriftRow = { reference, methods, klSdcc: drift.sdcc.error ? null : drift.sdcc.meanKl };
  if (tree) row.editors = editorSums(viewJunctions(tree, drift, (t) => `#${t}`));
  return row;
}

/** The verdict (src/metrics/verdict.ts) of the shown rollout's μ against the live prefix, in the page's names and number format. */
export function liveVerdict(drift: Pick<DriftData, 'methods'>): DriftVerdict {
  const figures = drift.methods.map((m) => ({
    method: m.method,
    n: m.error ? 0 : m.vsLive.n,
    logdiff: m.error ? null : m.vsLive.logdiff,
    mu: m.error ? null : m.vsLive.mu,
  }));
  return driftVerdict(figures, 'live', { label: (m) => METHOD_BY_ID[m].label, format: (x) => formatEffect(x) });
}

/** A verdict's state in words, for a table cell or a readout. */
export function stateWords(state: VerdictState): string {
  return state === 'at-floor' ? 'at the floor' : state === 'below' ? 'below zero' : state === 'above' ? 'above zero' : 'not scored';
}

/** Drift per edit of the shown rollout (src/metrics/junctions.ts) from the panel's scores, the costliest first. */
export function viewJunctions(tree: ConditioningTree, drift: Pick<DriftData, 'methods' | 'live'>, text: (token: number) => string): Junction[] {
  const scores = Object.fromEntries(
    SEQUENCE_METHODS.map((method) => {
      const m = drift.methods.find((x) => x.method === method);
      return [method, method === 'logit-tree' ? drift.live : m && !m.error ? m.logprob : new Map<number, number>()];
    }),
  ) as unknown as Record<SequenceMethod, ReadonlyMap<number, number>>;
  return byCost(rolloutJunctions(tree, scores, { text }));
}
