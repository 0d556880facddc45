// The drift colour scale: ℓ_method − ℓ_live, red below zero (the method scores the target lower
// than the policy's own view does), blue above, white at zero; one symmetric range for every view.
import { interpolateRdBu, scaleDiverging } from 'd3';

export function driftColor(range: number): (delta: number) => string {
  const scale = scaleDiverging(interpolateRdBu).domain([-range, 0, range]).clamp(true);
  return (delta) => scale(delta);
}

export function formatDelta(x: number): string {
  const a = Math.abs(x);
  const s = a === 0 ? '0' : a >= 100 ? a.toFixed(0) : a >= 1 ? a.toFixed(2) : a >= 1e-3 ? a.toFixed(3) : a.toExponential(1);
  return x < 0 ? `−${s}` : x > 0 ? `+${s}` : s;
}
