// The drift colour scale: ℓ_method − ℓ_live, red below zero (the method scores the target lower
// than the policy's own view does), blue above, white at zero; one symmetric range for every view.
import { interpolateRdBu, scaleDiverging } from 'd3';

export function driftColor(range: number): (delta: number) => string {
  const scale = scaleDiverging(interpolateRdBu).domain([-range, 0, range]).clamp(true);
  return (delta) => scale(delta);
}
