// The one format of a reported effect (a drift, μ, a logdiff, a floor) in the app, the CLI and the
// experiment reports: significant digits, never decimals, so a non-zero figure never prints as 0
// ("+7.1e-7", "−0.880", "18.8"); only an exact 0 prints as "0".

export interface EffectFormat {
  /** Significant digits (default 3; below 1e-3 or from 1e4 the exponent form keeps 2). */
  digits?: number;
  /** Write "+" before a positive figure (default true: a signed drift); false for magnitudes (logdiff). */
  signed?: boolean;
}

/** A figure with `digits` significant digits; "−" (U+2212) before a negative one, "+" before a positive signed one. */
export function formatEffect(x: number, { digits = 3, signed = true }: EffectFormat = {}): string {
  if (Number.isNaN(x)) return 'NaN';
  const a = Math.abs(x);
  if (a === Number.POSITIVE_INFINITY) return x < 0 ? '−∞' : signed ? '+∞' : '∞';
  let s: string;
  if (a === 0) return '0';
  if (a >= 1e-3 && a < 1e4) {
    s = a.toPrecision(digits);
    // toPrecision may round up into the next decade's exponent form (9999.5 → "1.00e+4").
    if (s.includes('e')) s = a.toExponential(Math.max(0, digits - 2)).replace('e+', 'e');
  } else s = a.toExponential(Math.max(0, digits - 2)).replace('e+', 'e');
  return x < 0 ? `−${s}` : signed ? `+${s}` : s;
}

/** A magnitude (logdiff, a floor, a KL): formatEffect without the "+". */
export function formatMagnitude(x: number, digits = 3): string {
  return formatEffect(x, { digits, signed: false });
}
