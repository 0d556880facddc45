// The verdict under the drift table (src/metrics/verdict.ts): the noise floor the exact methods set on this
// model and rollout, each method read "at the floor" or by what its sign means for it, and what to conclude.
import { useMemo } from 'react';
import { FLOOR_FACTOR } from '../../../metrics/verdict';
import { formatEffect, formatMagnitude } from '../../../present/number';
import { METHOD_BY_ID } from '../../../present/palette';
import { liveVerdict, stateWords, type DriftData } from '../../core/drift';

export function DriftVerdict({ drift }: { drift: DriftData }) {
  const verdict = useMemo(() => liveVerdict(drift), [drift]);
  return (
    <div className="drift-verdict" data-testid="drift-verdict" data-floor={String(verdict.floor)}>
      <p className="caption">
        Verdict against the live prefix: the noise floor is {formatMagnitude(verdict.floor)} nats (the exact methods&apos; logdiff on this model and rollout, at
        least 1e-6); a method whose |μ| is within {FLOOR_FACTOR} floors is at the floor, and its sign means nothing.
      </p>
      <ul>
        {verdict.methods.map((v) => {
          const m = drift.methods.find((x) => x.method === v.method)!;
          return (
            <li key={v.method} data-method={v.method} data-state={v.state} data-testid={`verdict-${v.method}`}>
              <i className="swatch" style={{ background: METHOD_BY_ID[v.method].color }} />
              <strong>{METHOD_BY_ID[v.method].label}</strong> μ {m.error ? '—' : formatEffect(m.vsLive.mu)}: <em>{stateWords(v.state)}</em>
              {v.floors !== null && v.state !== 'at-floor' ? ` (${formatMagnitude(v.floors)} floors)` : ''} — {v.meaning}.
            </li>
          );
        })}
      </ul>
      <p className="verdict-conclusion" data-testid="drift-conclusion">
        {verdict.conclusion}
      </p>
    </div>
  );
}
