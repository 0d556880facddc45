// Numeric comparison for kernel tests: fails with the first differing values and the max difference.

export interface CloseOptions {
  abs?: number;
  rel?: number;
  label?: string;
}

export interface CloseReport {
  maxAbs: number;
  maxRel: number;
  worst: number;
}

export function compare(got: ArrayLike<number>, want: ArrayLike<number>): CloseReport {
  let maxAbs = 0;
  let maxRel = 0;
  let worst = -1;
  for (let i = 0; i < want.length; i++) {
    const d = Math.abs(got[i] - want[i]);
    const r = d / Math.max(Math.abs(want[i]), 1e-30);
    if (!(d <= maxAbs)) {
      maxAbs = Number.isNaN(d) ? Infinity : d;
      worst = i;
    }
    if (r > maxRel) maxRel = r;
  }
  return { maxAbs, maxRel, worst };
}

/** Each element must satisfy |got - want| <= abs + rel * |want|. */
export function expectClose(got: ArrayLike<number>, want: ArrayLike<number>, options: CloseOptions = {}): CloseReport {
  const { abs = 1e-5, rel = 0, label = 'values' } = options;
  if (got.length !== want.length) throw new Error(`${label}: length ${got.length} != expected ${want.length}`);
  const bad: string[] = [];
  for (let i = 0; i < want.length && bad.length < 5; i++) {
    const d = Math.abs(got[i] - want[i]);
    if (!(d <= abs + rel * Math.abs(want[i]))) bad.push(`[${i}] got ${got[i]} want ${want[i]} (diff ${d.toExponential(3)})`);
  }
  const report = compare(got, want);
  if (bad.length) {
    throw new Error(
      `${label}: max abs diff ${report.maxAbs.toExponential(3)} at [${report.worst}] (max rel ${report.maxRel.toExponential(3)}), ` +
        `tolerance abs ${abs} rel ${rel}; first differences:\n  ${bad.join('\n  ')}`,
    );
  }
  return report;
}
