// "What the policy saw": the selected target's live prefix beside the two flattened replays
// (Naive-Compressed: the final walk; Naive-Full: the physical tape), as readable text with the
// diff against the live prefix, and the find bar with its keys.
import { Term } from '../../glossary/Term';
import { useEffect, useMemo, useRef, useState } from 'react';
import { findMatches, type Matches } from '../../core/contextFind';
import { buildPane, PANES, targetLabel, type PaneKind } from '../../core/contextModel';
import { CELL, CELL_COLORS } from '../../core/cells';
import type { ViewData } from '../../core/viewData';
import { useWorkbench } from '../../store';
import { STAGED_PANELS } from '../../store/rolloutSlice';
import type { IdSpan } from '../../store/types';
import { METHOD_BY_ID } from '../../../present/palette';
import { ContextPaneView, PaneTitle, type PaneInfo } from './ContextPaneView';
import { FindBar, KEY_HELP } from './FindBar';
import './context.css';

const INFO: Record<PaneKind, PaneInfo> = {
  live: { title: 'Live prefix', subtitle: 'what the policy saw (LogitTree, 4D mask)' },
  'naive-compressed': { title: METHOD_BY_ID['naive-compressed'].label, subtitle: 'the final walk' },
  'naive-full': { title: METHOD_BY_ID['naive-full'].label, subtitle: 'the physical tape' },
};

export function ContextPanel() {
  const view = useWorkbench((s) => s.view);
  const selected = useWorkbench((s) => s.selectedTarget);
  const query = useWorkbench((s) => s.findQuery);
  const findIndex = useWorkbench((s) => (s.findView === s.view ? s.findIndex : -1));
  const [idsChoice, setIdsChoice] = useState<boolean | null>(null);
  // A jump brings the panes into view (find and the jump keys work from anywhere on the page).
  const reveal = useWorkbench((s) => s.reveal);
  const panelRef = useRef<HTMLElement>(null);
  useEffect(() => {
    if (reveal) panelRef.current?.scrollIntoView({ block: 'nearest' });
  }, [reveal]);
  // Rollouts given as token lists (no text) read best as labelled tokens with their ids.
  const showIds = idsChoice ?? !view?.textual;
  const hasTarget = view !== null && selected !== null && view.rollout.isTarget[selected];
  const matches = useMemo(() => (view ? findMatches(view, query) : null), [view, query]);
  if (!view || !matches) return null;
  const current = findIndex >= 0 && findIndex < matches.count ? { first: matches.ranges[findIndex * 2], end: matches.ranges[findIndex * 2 + 1] } : null;

  return (
    <section className="panel context-panel" aria-label="What the policy saw" data-testid="context-panel" ref={panelRef}>
      <header className="panel-head">
        <h2>
          What the policy saw
          {selected !== null && view.rollout.isTarget[selected] ? (
            <>
              {' '}
              · target <code data-testid="context-target">{targetLabel(view, selected)}</code>
            </>
          ) : null}
        </h2>
        <label className="ids-toggle">
          <input type="checkbox" checked={showIds} onChange={(e) => setIdsChoice(e.target.checked)} data-testid="context-show-ids" /> ids
        </label>
        <FindBar />
      </header>
      <p className="key-help muted" data-testid="key-help">
        {KEY_HELP}
      </p>
      {hasTarget ? (
        <div className="context-panes">
          {PANES.map((kind) => (
            <StagedPane key={kind} view={view} kind={kind} target={selected} matches={matches} current={current} showIds={showIds} />
          ))}
        </div>
      ) : (
        <p className="muted pad">{view.rollout.targets.length ? 'Select a target to read its context.' : 'This rollout has no targets.'}</p>
      )}
      <ul className="legend context-legend" aria-label="Text legend">
        {(['prompt', 'obs', 'act'] as const).map((r) => (
          <li key={r}>
            <i style={{ background: CELL_COLORS[CELL[r]] }} />
            {r === 'obs' ? 'observation' : r === 'act' ? 'action (policy output)' : 'prompt'}
          </li>
        ))}
        <li>
          <i style={{ background: CELL_COLORS[CELL.inserted] }} />
          inserted by an <Term id="edit">edit</Term> (summary)
        </li>
        <li>
          <span className="g missing">struck</span> missing: the policy saw it, the replay drops it
        </li>
        <li>
          <span className="g stale">
            <Term id="stale-context">stale</Term>
          </span>{' '}
          evicted before the target, revived
        </li>
        <li>
          <span className="g future">later</span> written after the target (<Term id="time-travel-leakage">time-travel</Term>)
        </li>
        <li>
          <span className="g mark">⏎ → \x18 ·</span> newline, tab, control byte, invisible character
        </li>
        <li>
          <span className="g match">match</span> find
        </li>
      </ul>
    </section>
  );
}

interface StagedPaneProps {
  view: ViewData;
  kind: PaneKind;
  target: number;
  matches: Matches;
  current: IdSpan | null;
  showIds: boolean;
}

/**
 * One pane, built when its turn comes (the store's viewStage): a large view reaches the three panes one
 * per task, each with its text laid out and scrolled to its end. Until then an empty frame of the pane's
 * height holds its place.
 */
function StagedPane({ view, kind, target, matches, current, showIds }: StagedPaneProps) {
  const ready = useWorkbench((s) => s.viewStage > STAGED_PANELS.indexOf(`context-${kind}`));
  const pane = useMemo(() => (ready ? buildPane(view, kind, target, { breakLines: !showIds }) : null), [ready, view, kind, target, showIds]);
  if (!pane) {
    return (
      <section className={`context-pane pane-${kind}`} aria-label={INFO[kind].title} aria-busy>
        <header>
          <PaneTitle info={INFO[kind]} />
        </header>
        <div className="pane-scroll">
          <p className="muted pad">Laying out the text…</p>
        </div>
      </section>
    );
  }
  return <ContextPaneView view={view} pane={pane} info={INFO[kind]} matches={matches} current={current} showIds={showIds} />;
}
