// Reading the `end[]` encoding back (for CPU references, checks and views): which keys a query
// sees. Each call scans 0..i, so use it on one query at a time.

/** Keys visible to query i, ascending: k <= i with end[k] > i. */
export function visibleKeys(end: ArrayLike<number>, i: number): number[] {
  const keys: number[] = [];
  for (let k = 0; k <= i; k++) if (end[k] > i) keys.push(k);
  return keys;
}
