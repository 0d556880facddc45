// Target inspector: the selected target's section-3 facts, and what each replay method conditions
// it on, against the live prefix the policy saw. The method table is the page's one method legend
// (its colours are the lanes of the staircase lens and the tree overlay); clicking a method
// emphasises it in both views.
import { bisectLeft } from 'd3';
import { useMemo } from 'react';
import { selectedViews, type MethodView } from '../../core/methodViews';
import { finalPrefixText, targetFacts } from '../../core/viewData';
import { idRunsText, tokenDescription } from '../../core/contextModel';
import { useWorkbench } from '../../store';
import { INK, METHOD_BY_ID } from '../../../present/palette';
import { CELL_COLORS, CELL } from '../../core/cells';
import { axisEnd, PREFIX_STATE, prefixStateRuns } from '../../core/prefixStates';
import { formatEffect as formatDelta } from '../../../present/number';
import { TermText } from '../../glossary/Term';

export function Inspector() {
  const view = useWorkbench((s) => s.view);
  const selected = useWorkbench((s) => s.selectedTarget);
  const method = useWorkbench((s) => s.method);
  const setMethod = useWorkbench((s) => s.setMethod);
  const stepTarget = useWorkbench((s) => s.stepTarget);
  const views = useMemo(() => selectedViews(view, selected), [view, selected]);

  if (!view) return null;
  const targets = view.rollout.targets;
  if (selected === null || !views) {
    return (
      <section className="panel inspector" aria-label="Target inspector">
        <header className="panel-head">
          <h2>Target inspector</h2>
        </header>
        <p className="muted pad">{targets.length ? 'Click a target in either view, or press → to select one.' : 'This rollout has no targets.'}</p>
      </section>
    );
  }
  const facts = targetFacts(view, selected);
  const order = bisectLeft(targets, selected);
  const live = view.tree.livePrefix(selected);
  const chosen = views.find((v) => v.method === method)!;

  return (
    <section className="panel inspector" aria-label="Target inspector" data-testid="inspector" data-tour="inspector">
      <header className="panel-head">
        <h2>Target inspector</h2>
        <div className="stepper">
          <button type="button" onClick={() => stepTarget(-1)} disabled={order === 0} aria-label="Previous target" data-testid="target-prev">
            ←
          </button>
          <span className="muted">
            {order + 1} / {targets.length}
          </span>
          <button type="button" onClick={() => stepTarget(1)} disabled={order >= targets.length - 1} aria-label="Next target" data-testid="target-next">
            →
          </button>
        </div>
      </header>
      <div className="target-head">
        <span className="target-chip">
          target <strong data-testid="inspector-target">{selected}</strong>
        </span>
        <code data-testid="inspector-token">{tokenDescription(view, selected)}</code>
        <span className="muted">
          segment {facts.segment} · branch {facts.segment} · trie node <span data-testid="inspector-scoringNode">{facts.scoringNode}</span> (position{' '}
          {facts.depth})
        </span>
      </div>
      <dl className="facts">
        <div data-tour="fact-eviction-mass">
          <dt>
            <TermText text="eviction mass" />
          </dt>
          <dd data-testid="inspector-evictionMass">{facts.evictionMass ?? '—'}</dd>
        </div>
        <div data-tour="fact-diverging">
          <dt>
            <TermText text="diverging" />
          </dt>
          <dd data-testid="inspector-diverging" className={facts.diverging ? 'yes' : ''}>
            {facts.diverging ? 'yes' : 'no'}
          </dd>
        </div>
        <div data-tour="fact-dropped">
          <dt>
            <TermText text="dropped" />
          </dt>
          <dd data-testid="inspector-dropped">{facts.dropped ? 'yes' : 'no'}</dd>
        </div>
        <div data-tour="fact-live-prefix">
          <dt>
            <TermText text="live prefix" />
          </dt>
          <dd>{facts.livePrefixLength}</dd>
        </div>
        <div data-tour="fact-final-prefix">
          <dt>
            <TermText text="final prefix" />
          </dt>
          <dd data-testid="inspector-finalPrefix" title={finalPrefixText(facts).title}>
            {finalPrefixText(facts).text}
          </dd>
        </div>
        <div data-tour="fact-full-prefix">
          <dt>
            <TermText text="full prefix" />
          </dt>
          <dd>{facts.fullPrefixLength}</dd>
        </div>
        <div data-tour="fact-rollout-log-p">
          <dt>
            <TermText text="rollout log p" />
          </dt>
          <dd>{facts.rolloutLogprob === null ? '—' : formatLogprob(facts.rolloutLogprob)}</dd>
        </div>
      </dl>

      <ModelScores target={selected} />

      <h3>What each method conditions target {selected} on</h3>
      <table className="methods" data-testid="method-table">
        <thead>
          <tr>
            <th>method</th>
            <th title="Prefix length">
              <TermText text="prefix" />
            </th>
            <th title="Ids the policy saw that the method does not show">
              <TermText text="missing" />
            </th>
            <th title="Ids it shows that were evicted before the target was decoded (stale context)">
              <TermText text="stale" />
            </th>
            <th title="Ids it shows that were written after the target (time-travel leakage)">
              <TermText text="future" />
            </th>
            <th />
          </tr>
        </thead>
        <tbody>
          {views.map((v) => (
            <MethodRow key={v.method} v={v} active={v.method === method} onPick={() => setMethod(v.method)} diverging={facts.diverging} />
          ))}
        </tbody>
      </table>

      <PrefixStrips target={selected} live={live} views={views} method={method} />

      <div className="sequence" data-testid="method-sequence">
        <span className="muted">{METHOD_BY_ID[method].label} feeds </span>
        {chosen.prefix ? <IdRuns ids={chosen.prefix} /> : <em>nothing: the target is dropped from the final walk</em>}
        {chosen.prefix && <span> → {selected}</span>}
        {chosen.teacher && (
          <div>
            <span className="muted">teacher (stop-gradient) sees </span>
            <IdRuns ids={chosen.teacher} />
          </div>
        )}
        <div className="muted">The text of these prefixes is in “What the policy saw”.</div>
      </div>
    </section>
  );
}

function MethodRow({ v, active, onPick, diverging }: { v: MethodView; active: boolean; onPick: () => void; diverging: boolean }) {
  const style = METHOD_BY_ID[v.method];
  let verdict: string;
  const travel = v.missing > 0 || v.future > 0;
  if (!v.prefix) verdict = 'not scored';
  else if (v.exact) verdict = 'exact';
  else if (v.method === 'sdcc') verdict = diverging ? '+ KL to live' : 'drifts';
  else if (travel && v.stale) verdict = 'time-travel + stale';
  else if (travel) verdict = 'time-travel';
  else if (v.stale) verdict = 'stale context';
  else verdict = 'reordered';
  return (
    <tr className={active ? 'active' : undefined} onClick={onPick} data-method={v.method} aria-selected={active}>
      <td>
        <button type="button" className="method-pick" onClick={onPick} title={style.sees}>
          <i style={{ background: style.color }} />
          {style.label}
        </button>
      </td>
      <td>{v.prefix ? v.prefix.length : '—'}</td>
      <td className={v.missing ? 'bad' : undefined}>{v.prefix ? v.missing : '—'}</td>
      <td className={v.stale ? 'bad' : undefined}>{v.prefix ? v.stale : '—'}</td>
      <td className={v.future ? 'bad' : undefined}>{v.prefix ? v.future : '—'}</td>
      <td className={v.exact ? 'ok' : 'muted'}>{verdict}</td>
    </tr>
  );
}

const STRIP = { left: 92, rowH: 15, gap: 5, top: 18 };

/**
 * One row per method on the physical axis (ids up to the target, and beyond it when a method shows
 * later content): shared (filled), stale (hatched), future (cross-hatched), missing (hollow).
 */
function PrefixStrips({ target, live, views, method }: { target: number; live: Int32Array; views: MethodView[]; method: string }) {
  const width = 412;
  const plotW = width - STRIP.left - 8;
  const end = axisEnd(
    target,
    views.map((v) => v.prefix),
  );
  const cw = plotW / end;
  const rows = [{ key: 'live', label: 'live (policy)', color: '#e6edf3', runs: prefixStateRuns(live, live, target, end) }].concat(
    views.map((v) => ({
      key: v.method,
      label: METHOD_BY_ID[v.method].short,
      color: METHOD_BY_ID[v.method].color,
      runs: prefixStateRuns(live, v.prefix, target, end),
    })),
  );
  const height = STRIP.top + rows.length * (STRIP.rowH + STRIP.gap) + 22;
  const gap = cw >= 6 ? 1 : 0;
  const bottom = STRIP.top + rows.length * (STRIP.rowH + STRIP.gap);
  return (
    <svg width={width} height={height} className="prefix-strips" data-testid="prefix-strips" aria-label="Prefixes on the physical tape">
      <defs>
        <pattern id="stale-hatch" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <line x1="0" y1="0" x2="0" y2="4" stroke={INK.bg} strokeWidth="1.6" />
        </pattern>
        <pattern id="future-hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
          <line x1="0" y1="0" x2="0" y2="5" stroke={INK.bg} strokeWidth="1.3" />
          <line x1="0" y1="0" x2="5" y2="0" stroke={INK.bg} strokeWidth="1.3" />
        </pattern>
      </defs>
      <text x={STRIP.left} y={11} fontSize={10} fill={INK.muted}>
        physical ids 0–{target - 1} → target {target}
        {end > target + 1 ? ` → written later ${target + 1}–${end - 1}` : ''}
      </text>
      {rows.map((row, r) => {
        const y = STRIP.top + r * (STRIP.rowH + STRIP.gap);
        const dim = row.key !== 'live' && row.key !== method ? 0.78 : 1;
        const parts = [];
        for (let i = 0; i < row.runs.length; i += 3) {
          const [a, b, s] = [row.runs[i], row.runs[i + 1], row.runs[i + 2]];
          const x = STRIP.left + a * cw;
          const w = Math.max((b - a) * cw - gap, 0.8);
          if (s === PREFIX_STATE.missing)
            parts.push(
              <rect
                key={i}
                x={x + 0.5}
                y={y + 0.5}
                width={Math.max(w - 1, 0.5)}
                height={STRIP.rowH - 1}
                fill="none"
                stroke={row.color}
                strokeDasharray="2 2"
              />,
            );
          else {
            parts.push(<rect key={i} x={x} y={y} width={w} height={STRIP.rowH} fill={row.color} opacity={dim} />);
            if (s === PREFIX_STATE.stale) parts.push(<rect key={`h${i}`} x={x} y={y} width={w} height={STRIP.rowH} fill="url(#stale-hatch)" />);
            if (s === PREFIX_STATE.future) parts.push(<rect key={`h${i}`} x={x} y={y} width={w} height={STRIP.rowH} fill="url(#future-hatch)" />);
          }
        }
        return (
          <g key={row.key} data-row={row.key}>
            <text
              x={STRIP.left - 8}
              y={y + STRIP.rowH / 2}
              textAnchor="end"
              dominantBaseline="central"
              fontSize={11}
              fontWeight={row.key === method ? 700 : 500}
              fill={row.color}
            >
              {row.label}
            </text>
            {parts}
            <rect x={STRIP.left + target * cw} y={y} width={Math.max(cw - gap, 1.5)} height={STRIP.rowH} fill={CELL_COLORS[CELL.target]} />
          </g>
        );
      })}
      {cw >= 8 &&
        Array.from({ length: end - 1 }, (_, i) => (
          <line
            key={`g${i}`}
            x1={STRIP.left + (i + 1) * cw - 0.5}
            x2={STRIP.left + (i + 1) * cw - 0.5}
            y1={STRIP.top}
            y2={bottom - STRIP.gap}
            stroke={INK.panel}
            strokeWidth={1}
          />
        ))}
      <g transform={`translate(${STRIP.left},${bottom + 8})`} fontSize={10} fill={INK.muted}>
        <rect width={10} height={9} y={-1} fill="#8a97a6" />
        <text x={14} y={7}>
          shown, live
        </text>
        <rect x={74} width={10} height={9} y={-1} fill="#8a97a6" />
        <rect x={74} width={10} height={9} y={-1} fill="url(#stale-hatch)" />
        <text x={88} y={7}>
          stale
        </text>
        <rect x={122} width={10} height={9} y={-1} fill="#8a97a6" />
        <rect x={122} width={10} height={9} y={-1} fill="url(#future-hatch)" />
        <text x={136} y={7}>
          future
        </text>
        <rect x={178} width={10} height={9} y={-1} fill="none" stroke="#8a97a6" strokeDasharray="2 2" />
        <text x={192} y={7}>
          not shown
        </text>
      </g>
    </svg>
  );
}

/** A prefix as runs of physical ids (`0–1, 9–10`), with its length. */
function IdRuns({ ids }: { ids: Int32Array }) {
  return (
    <>
      <span>{ids.length} tokens: </span>
      <code>ids {idRunsText(ids)}</code>
    </>
  );
}

/** The model's log-probability of the target under each method, once the rollout is scored. */
function ModelScores({ target }: { target: number }) {
  const drift = useWorkbench((s) => (s.driftView === s.view ? s.drift : null));
  if (!drift) return null;
  const live = drift.live.get(target);
  return (
    <>
      <h3>Model log p of target {target}</h3>
      <table className="scores" data-testid="inspector-scores">
        <tbody>
          <tr>
            <td>live prefix (exact)</td>
            <td data-testid="inspector-logprob-live">{live === undefined ? '—' : live.toFixed(4)}</td>
            <td className="muted">Δ vs live</td>
          </tr>
          {drift.methods.map((m) => {
            const lp = m.logprob.get(target);
            const d = m.delta.get(target);
            return (
              <tr key={m.method} data-method={m.method}>
                <td>
                  <i className="swatch" style={{ background: METHOD_BY_ID[m.method].color }} />
                  {METHOD_BY_ID[m.method].label}
                </td>
                <td data-testid={`inspector-logprob-${m.method}`}>{lp === undefined ? (m.error ? 'not scored' : 'dropped') : lp.toFixed(4)}</td>
                <td data-testid={`inspector-delta-${m.method}`} className={d !== undefined && Math.abs(d) > 1e-3 ? 'bad' : 'muted'}>
                  {d === undefined ? '—' : formatDelta(d)}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}

function formatLogprob(x: number): string {
  return Number.isInteger(x * 1000) ? String(x) : x.toFixed(3);
}
