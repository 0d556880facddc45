// The shipped results of the learning experiment (docs/experiments/learning/reference.json, written
// by `mw experiment learning`) as the dashed curves a live run's held-out EM chart draws, when the
// run trains as one of the experiment's phases did (src/run/reference.ts says when).

import shipped from '../../../../docs/experiments/learning/reference.json';
import { METHOD_BY_ID } from '../../../present/palette';
import type { RunConfig } from '../../../run/config';
import { referenceCurvesFor, referencePhase, type ReferenceCurves, type ReferencePhase } from '../../../run/reference';
import type { ReferenceSeries } from './draw';

const SHIPPED_REFERENCE = shipped as ReferenceCurves;

/** The shipped phase a run reproduces, or null. */
export function shippedPhase(config: RunConfig): ReferencePhase | null {
  return referencePhase(config, SHIPPED_REFERENCE);
}

/** The reference curves of a run's lanes, in their colours. */
export function referenceSeries(config: RunConfig): ReferenceSeries[] {
  return referenceCurvesFor(config, shippedPhase(config)).map((c) => ({ method: c.method, color: METHOD_BY_ID[c.method].color, points: c.points }));
}
