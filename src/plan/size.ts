// How large a rollout's tree and plans will be, from its events alone, before any of them is built:
// a 244 KB rollout whose 2,000 edits each evict one token has N_packed 4,000,000, and its tree, plans
// and export are that many rows (a 736 KB one exported to 1.15 GB). The commands and the page refuse
// a rollout above a limit with the figure and the limit (docs/reliability.md).

import { quote } from '../rollout/errors';
import type { Rollout } from '../rollout/rollout';
import { packedLength } from '../tree/derive';
import { branchLengths } from './positions';
import type { Method } from './types';

/**
 * The default limit on the rows of one rollout's tree or plan (the trie's N_packed, a plan's or an
 * export's rows): 2,000,000 rows are ~100 MB of tree and plan in memory. Overridable: `--max-packed N`,
 * the page's "largest tree" setting.
 */
export const DEFAULT_MAX_PACKED = 2_000_000;

export interface RolloutSize {
  /** N_packed: the nodes of the packed trie (every branch, shared prefixes once). */
  nPacked: number;
  /** Rows of each method's plan (sdcc: at most, the student and its teachers). */
  rows: Record<Method, number>;
}

/** N_packed and each method's rows, in time following the events and the branches' runs; no tree is built. */
export function rolloutSize(rollout: Rollout): RolloutSize {
  const lengths = branchLengths(rollout);
  const nPacked = packedLength(rollout);
  let logitTree = 0;
  let segment = -1;
  for (const t of rollout.targets) {
    // Targets come grouped by segment: one causal sequence per branch holding targets of its own.
    if (rollout.segments[t] === segment) continue;
    segment = rollout.segments[t];
    logitTree += lengths[segment];
  }
  const student = lengths[rollout.K];
  return {
    nPacked,
    rows: {
      'naive-full': rollout.length,
      'naive-compressed': student,
      'logit-tree': logitTree,
      'packed-4d': nPacked,
      // The final walk, then teachers: the pruned packed tree (within N_packed) or trimmed branches (within logit-tree's).
      sdcc: student + Math.max(nPacked, logitTree),
    },
  };
}

/**
 * A count with thousands separators (4,000,000). Not toLocaleString: its first call loads the
 * locale's data, a task of 100 ms or more on the page's thread.
 */
function figure(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** The refusal of a tree of `nPacked` nodes above `limit` (null within it), as sizeProblem words it. */
export function packedProblem(id: string, nPacked: number, limit: number, raise = 'raise the limit to build it'): string | null {
  if (nPacked <= limit) return null;
  return `rollout ${quote(id)}: N_packed ${figure(nPacked)} is above the limit of ${figure(limit)} rows (its tree would hold that many nodes; ${raise})`;
}

/**
 * Why a rollout is too large for what is about to be built (null when it is not): the tree (N_packed)
 * and, with `method`, that method's plan, against `limit` rows. `raise` says how to allow more.
 */
export function sizeProblem(rollout: Rollout, limit: number, method?: Method, raise = 'raise the limit to build it'): string | null {
  const size = rolloutSize(rollout);
  const where = `rollout ${quote(rollout.id)}`;
  const tree = packedProblem(rollout.id, size.nPacked, limit, raise);
  if (tree) return tree;
  if (method && size.rows[method] > limit) {
    const rows = figure(size.rows[method]);
    return `${where}: the ${method} plan has ${rows} rows, above the limit of ${figure(limit)} (N_packed ${figure(size.nPacked)}; ${raise})`;
  }
  return null;
}
