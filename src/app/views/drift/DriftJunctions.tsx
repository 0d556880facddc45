// Drift per edit of the shown rollout (src/metrics/junctions.ts), the costliest edit first: the targets it
// makes diverge, each method's μ and logdiff against the live prefix on them, and the largest single-target
// drifts with their text; a click on one selects that target (the context panes and views follow).
import { useMemo } from 'react';
import { formatEffect, formatMagnitude } from '../../../present/number';
import { METHOD_BY_ID } from '../../../present/palette';
import { tokenText } from '../../../rollout/tokenizer';
import { SEQUENCE_METHODS } from '../../../plan/types';
import { viewJunctions, type DriftData } from '../../core/drift';
import type { ViewData } from '../../core/viewData';
import { useWorkbench } from '../../store';

export function DriftJunctions({ view, drift }: { view: ViewData; drift: DriftData }) {
  const selectTarget = useWorkbench((s) => s.selectTarget);
  const junctions = useMemo(() => viewJunctions(view.tree, drift, (t) => tokenText(view.tokenizer, t)), [view, drift]);
  if (!junctions.length) return <p className="caption">This rollout has no edit: every target is scored on its live prefix by every method.</p>;
  return (
    <div className="drift-junctions">
      <p className="caption">
        Drift per edit, the costliest first (cost: the largest Σ|ℓ_m − ℓ_live| of any method on the edit&apos;s targets). An edit&apos;s targets are those
        generated before it whose live prefix loses ids to it, and those of the segment it opens. Click a target to select it.
      </p>
      <table className="drift-table" data-testid="junction-table">
        <thead>
          <tr>
            <th>edit</th>
            <th title="ids the edit evicts / inserts">ids</th>
            <th title="targets before the edit that lose context + targets of the segment it opens">targets</th>
            <th>cost</th>
            {SEQUENCE_METHODS.map((m) => (
              <th key={m} title="μ and logdiff against the live prefix on the edit's targets">
                {METHOD_BY_ID[m].short} μ · logdiff
              </th>
            ))}
            <th>largest drifts</th>
          </tr>
        </thead>
        <tbody>
          {junctions.map((j) => {
            const largest = SEQUENCE_METHODS.flatMap((m) => j.methods[m].largest.map((t) => ({ m, t })))
              .sort((a, b) => Math.abs(b.t.drift) - Math.abs(a.t.drift))
              .slice(0, 3);
            return (
              <tr key={j.edit} data-edit={j.edit} data-cost={String(j.cost)} data-testid={`junction-${j.edit}`}>
                <td>{j.edit}</td>
                <td>
                  −{j.evicted} +{j.inserted}
                </td>
                <td>
                  {j.targets.before.length} + {j.targets.after.length}
                </td>
                <td>{formatMagnitude(j.cost)}</td>
                {SEQUENCE_METHODS.map((m) => {
                  const f = j.methods[m];
                  return (
                    <td key={m} data-method={m} data-mu={String(f.mu ?? '')}>
                      {f.mu === null ? '—' : `${formatEffect(f.mu)} · ${formatMagnitude(f.logdiff!)}`}
                    </td>
                  );
                })}
                <td>
                  {largest.map(({ m, t }) => (
                    <button
                      type="button"
                      className="small link"
                      key={`${m}-${t.id}`}
                      onClick={() => selectTarget(t.id)}
                      title={`…${t.context}[${t.token}] under ${METHOD_BY_ID[m].label}: ${formatEffect(t.drift)} nats; select target ${t.id}`}
                      data-testid="junction-target"
                      data-target={t.id}
                    >
                      {METHOD_BY_ID[m].short} {formatEffect(t.drift)} at {t.id} “{t.token}”
                    </button>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
