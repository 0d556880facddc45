// The conditioning tree: the trie of docs/tree.md with unbranched runs collapsed into labelled edges,
// drawn as SVG owned by React. x is the logical position (depth), so an edge is as long as the
// tokens it carries; y is one row per leaf. d3-zoom (one effect, one ref) scales x and pans both
// axes; content renders for a window three viewports wide, so panning inside it only moves a <g>.
import { select, zoom as d3zoom, zoomIdentity, type D3ZoomEvent, type ZoomTransform } from 'd3';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { roleName, tokenDisplay, type ViewData } from '../../core/viewData';
import { downloadText, fileStem, svgToPng, downloadBlob } from '../../export/download';
import { svgPainter } from '../../export/painter';
import type { Method } from '../../../plan/types';
import { useWorkbench } from '../../store';
import { ExportButtons } from '../ExportButtons';
import { MethodKey } from '../MethodKey';
import { TermText } from '../../glossary/Term';
import { useTargetColor } from '../common/useTargetColor';
import { selectedViews } from '../../core/methodViews';
import { INK, METHOD_BY_ID, METHOD_STYLES } from '../../../present/palette';
import { CELL, CELL_COLORS, type CellClass } from '../../core/cells';
import { markDrawn, measureFrame } from '../common/perf';
import { useSize } from '../common/useSize';
import { edgeRuns, treeModelOf, NODE, type TreeEdge, type TreeModel } from '../../core/treeModel';
import { methodOverlays, type MethodOverlay } from '../../core/treeOverlay';
import { TreeTextMarks } from './TreeTextMarks';

const MARGIN = { top: 46, right: 16, bottom: 8, left: 16 };
const ROW_H = 64;
const STRIP_H = 18;
const LANE_H = 3;
const LANE_GAP = 1.5;
const MAX_CELL = 46;
const RIGHT_PAD = 120; // room for leaf labels after the deepest edge
const FONT = 'Inter, system-ui, sans-serif';
const MONO = 'ui-monospace, Menlo, monospace';

interface Pan {
  k: number;
  x: number;
  y: number;
}

interface Layout {
  plotW: number;
  plotH: number;
  /** Width of one position at zoom 1. */
  cw: number;
  worldH: number;
}

function layoutOf(model: TreeModel, width: number, height: number): Layout {
  const plotW = Math.max(10, width - MARGIN.left - MARGIN.right);
  const plotH = Math.max(10, height - MARGIN.top - MARGIN.bottom);
  const cw = Math.min(MAX_CELL, (plotW - RIGHT_PAD) / (model.maxDepth + 1));
  return { plotW, plotH, cw: Math.max(cw, 1e-3), worldH: model.rows * ROW_H };
}

const rowY = (edge: TreeEdge) => edge.y * ROW_H + 26;

export function TreeView() {
  const view = useWorkbench((s) => s.view);
  const selected = useWorkbench((s) => s.selectedTarget);
  const method = useWorkbench((s) => s.method);
  const selectTarget = useWorkbench((s) => s.selectTarget);
  const targetColor = useTargetColor();
  const model = useMemo(() => (view ? treeModelOf(view.trie) : null), [view]);
  const views = useMemo(() => selectedViews(view, selected), [view, selected]);
  const overlays = useMemo(() => (model && views && selected !== null ? methodOverlays(model, views, selected) : null), [model, views, selected]);

  const wrapRef = useRef<HTMLDivElement>(null);
  const svgRef = useRef<SVGSVGElement>(null);
  const zoomTarget = useRef<SVGGElement>(null);
  const { width, height } = useSize(wrapRef);
  const layout = useMemo(() => (model && width > 20 && height > 20 ? layoutOf(model, width, height) : null), [model, width, height]);
  const [pan, setPanState] = useState<Pan>({ k: 1, x: 0, y: 0 });
  // A new model resets the zoom: the tree renders again only when the pan really changes.
  const setPan = useCallback((p: Pan) => setPanState((old) => (old.k === p.k && old.x === p.x && old.y === p.y ? old : p)), []);
  const [hover, setHover] = useState<{ node: number; x: number; y: number } | null>(null);
  const setIdHover = useWorkbench((s) => s.setHover);

  // d3-zoom: x scales with k, y only pans (rows keep their height).
  useEffect(() => {
    const el = zoomTarget.current;
    if (!el || !model || !layout) return;
    const worldW = (model.maxDepth + 1) * layout.cw + RIGHT_PAD;
    const startY = layout.worldH < layout.plotH ? (layout.plotH - layout.worldH) / 2 : 0;
    let last: ZoomTransform = zoomIdentity;
    let y = startY;
    const behavior = d3zoom<SVGGElement, unknown>()
      .scaleExtent([1, Math.max(1, 40 / layout.cw)])
      .extent([
        [0, 0],
        [layout.plotW, layout.plotH],
      ])
      .constrain((t, extent) => {
        const w = extent[1][0] - extent[0][0];
        const minX = Math.min(0, w - worldW * t.k);
        const x = Math.max(minX, Math.min(0, t.x));
        return x === t.x ? t : zoomIdentity.translate(x, t.y).scale(t.k);
      })
      .on('zoom', (event: D3ZoomEvent<SVGGElement, unknown>) => {
        const t = event.transform;
        if (t.k === last.k) {
          const minY = Math.min(startY, layout.plotH - layout.worldH - 12);
          y = Math.max(minY, Math.min(Math.max(startY, 12), y + t.y - last.y));
        }
        last = t;
        setPan({ k: t.k, x: t.x, y });
      });
    const selection = select(el);
    selection.call(behavior).on('dblclick.zoom', null);
    selection.call(behavior.transform, zoomIdentity);
    setPan({ k: 1, x: 0, y: startY });
    return () => {
      selection.on('.zoom', null);
    };
  }, [model, layout, setPan]);

  // Marks for the benchmark: React's work per render (render start to commit), and the first
  // paint of a new model.
  const markedModel = useRef<TreeModel | null>(null);
  const renderStart = useRef(0);
  renderStart.current = performance.now();
  useLayoutEffect(() => measureFrame('tree', renderStart.current));
  useEffect(() => {
    if (!model || !layout || markedModel.current === model) return;
    const id = requestAnimationFrame(() => {
      markedModel.current = model;
      markDrawn('tree');
    });
    return () => cancelAnimationFrame(id);
  });

  if (!view || !model) return <section className="panel tree-panel" aria-label="Conditioning tree" />;

  const windowX = layout ? Math.floor(-pan.x / layout.plotW) : 0;
  const windowY = layout ? Math.floor(-pan.y / layout.plotH) : 0;
  const scoring = selected !== null ? view.tree.scoringNode[selected] : -1;

  const locate = (event: React.MouseEvent<SVGGElement>) => {
    if (!layout) return null;
    const rect = svgRef.current!.getBoundingClientRect();
    const mx = event.clientX - rect.left - MARGIN.left - pan.x;
    const my = event.clientY - rect.top - MARGIN.top - pan.y;
    const step = layout.cw * pan.k;
    const depth = Math.floor(mx / step);
    for (const e of model.edges) {
      if (Math.abs(my - rowY(e)) > STRIP_H / 2 + 3) continue;
      const n = e.from + depth - e.depth;
      if (n >= e.from && n <= e.to) return { node: n, x: event.clientX - rect.left, y: event.clientY - rect.top };
    }
    return null;
  };

  const exportSvgText = (): string => {
    const svg = svgRef.current!;
    const body = new XMLSerializer().serializeToString(svg);
    const legend = svgPainter(width, TREE_LEGEND_H, INK.bg);
    drawTreeLegend(legend, 16, 0);
    const legendSvg = legend
      .toString()
      .replace(/^<svg[^>]*>/, '')
      .replace(/<\/svg>$/, '');
    return [
      `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + TREE_LEGEND_H}" viewBox="0 0 ${width} ${height + TREE_LEGEND_H}" font-family="${FONT}">`,
      body,
      `<g transform="translate(0 ${height})">${legendSvg}</g>`,
      '</svg>',
    ].join('\n');
  };
  const stem = fileStem(view.rollout.id);

  return (
    <section className="panel tree-panel" aria-label="Conditioning tree" data-tour="tree">
      <header className="panel-head">
        <h2>
          <TermText text="Conditioning tree" />
        </h2>
        <span className="hint">
          {model.edges.length} edges · {view.tree.figures.packedLength} trie nodes · wheel: zoom positions · drag: pan
        </span>
        <ExportButtons
          name="tree"
          onSvg={() => downloadText(exportSvgText(), `${stem}-tree.svg`, 'image/svg+xml')}
          onPng={async () => downloadBlob(await svgToPng(exportSvgText(), width, height + TREE_LEGEND_H, 2), `${stem}-tree.png`)}
        />
      </header>
      <div
        className="canvas-wrap"
        ref={wrapRef}
        style={{ height: `min(${MARGIN.top + MARGIN.bottom + model.rows * ROW_H + 12}px, clamp(240px, 40vh, 520px))` }}
      >
        {layout && (
          <svg ref={svgRef} width={width} height={height} data-testid="tree-svg" fontFamily={FONT} xmlns="http://www.w3.org/2000/svg">
            <defs>
              <clipPath id="tree-plot">
                <rect x={0} y={-MARGIN.top} width={layout.plotW} height={layout.plotH + MARGIN.top} />
              </clipPath>
              <pattern id="copy-hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                <rect width="5" height="5" fill="transparent" />
                <line x1="0" y1="0" x2="0" y2="5" stroke="#0f1419" strokeWidth="2.2" opacity="0.75" />
              </pattern>
            </defs>
            <rect width={width} height={height} fill={INK.bg} />
            <DepthAxis layout={layout} pan={pan} maxDepth={model.maxDepth} />
            <g
              ref={zoomTarget}
              transform={`translate(${MARGIN.left},${MARGIN.top})`}
              onMouseMove={(e) => {
                const hit = locate(e);
                setHover(hit);
                setIdHover(hit ? { first: view.trie.id[hit.node], end: view.trie.id[hit.node] + 1 } : null);
              }}
              onMouseLeave={() => {
                setHover(null);
                setIdHover(null);
              }}
              onClick={(e) => {
                const hit = locate(e);
                if (hit) {
                  const id = view.trie.id[hit.node];
                  if (view.rollout.isTarget[id]) selectTarget(id);
                }
              }}
              style={{ cursor: 'grab' }}
            >
              <rect width={layout.plotW} height={layout.plotH} fill="transparent" pointerEvents="all" />
              <g clipPath="url(#tree-plot)">
                <g transform={`translate(${pan.x},${pan.y})`}>
                  <TreeContent
                    model={model}
                    view={view}
                    layout={layout}
                    k={pan.k}
                    windowX={windowX}
                    windowY={windowY}
                    overlays={overlays}
                    method={method}
                    scoring={scoring}
                    selected={selected}
                    targetColor={targetColor}
                  />
                  <TreeTextMarks
                    view={view}
                    model={model}
                    step={layout.cw * pan.k}
                    xMin={(windowX - 1) * layout.plotW}
                    xMax={(windowX + 2) * layout.plotW}
                    rowY={rowY}
                    stripH={STRIP_H}
                  />
                </g>
              </g>
            </g>
          </svg>
        )}
        {hover && <TreeTooltip node={hover.node} x={hover.x} y={hover.y} view={view} model={model} width={width} />}
      </div>
      <TreeLegendHtml />
    </section>
  );
}

function DepthAxis({ layout, pan, maxDepth }: { layout: Layout; pan: Pan; maxDepth: number }) {
  const step = layout.cw * pan.k;
  const lo = Math.max(0, Math.floor(-pan.x / step));
  const hi = Math.min(maxDepth + 1, Math.ceil((layout.plotW - pan.x) / step));
  const every = step >= 16;
  let ticks: number[];
  if (every) ticks = Array.from({ length: Math.max(0, hi - lo) }, (_, i) => lo + i);
  else {
    const want = Math.max(2, Math.floor(layout.plotW / 80));
    const raw = (hi - lo) / want;
    const mag = 10 ** Math.floor(Math.log10(Math.max(raw, 1)));
    const nice = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
    ticks = [];
    for (let t = Math.ceil(lo / nice) * nice; t <= hi; t += nice) ticks.push(t);
  }
  return (
    <g transform={`translate(${MARGIN.left},0)`} fontSize={11}>
      <text x={0} y={13} fill={INK.muted}>
        logical position (trie depth) →
      </text>
      <line x1={0} x2={layout.plotW} y1={MARGIN.top - 8.5} y2={MARGIN.top - 8.5} stroke={INK.line} />
      {ticks.map((t) => {
        const x = pan.x + (t + (every ? 0.5 : 0)) * step;
        if (x < -1 || x > layout.plotW + 1) return null;
        return (
          <g key={t} transform={`translate(${x},0)`}>
            <line y1={MARGIN.top - 13} y2={MARGIN.top - 8} stroke={INK.line} />
            <text y={MARGIN.top - 16} textAnchor="middle" fill={INK.text} fontSize={every && step < 22 ? 9 : 11}>
              {t}
            </text>
          </g>
        );
      })}
    </g>
  );
}

interface ContentProps {
  model: TreeModel;
  view: ViewData;
  layout: Layout;
  k: number;
  windowX: number;
  windowY: number;
  overlays: MethodOverlay[] | null;
  method: Method;
  scoring: number;
  selected: number | null;
  targetColor: ((id: number) => string | null) | null;
}

/** Everything inside the pan group, for the current zoom and a window of 3x3 viewports. */
const TreeContent = memo(function TreeContent({ model, view, layout, k, windowX, windowY, overlays, method, scoring, selected, targetColor }: ContentProps) {
  const step = layout.cw * k;
  const xMin = (windowX - 1) * layout.plotW;
  const xMax = (windowX + 2) * layout.plotW;
  const yMin = (windowY - 1) * layout.plotH - ROW_H;
  const yMax = (windowY + 2) * layout.plotH + ROW_H;
  const perNode = step >= 10;
  const showIds = step >= 20;
  const edges = model.edges.filter((e) => {
    const y = rowY(e);
    if (y < yMin || y > yMax) return false;
    const x0 = e.depth * step;
    const x1 = (e.depth + e.to - e.from + 1) * step;
    const parentY = e.parentEdge >= 0 ? rowY(model.edges[e.parentEdge]) : y;
    return x1 >= xMin && x0 <= xMax + RIGHT_PAD && Math.max(y, parentY) >= yMin;
  });
  const nodeX = (e: TreeEdge, n: number) => (e.depth + n - e.from) * step;
  const clampX = (x: number) => Math.max(xMin, Math.min(xMax, x));

  const copiesOfSelected: number[] = [];
  if (selected !== null) {
    for (const e of edges) for (let n = e.from; n <= e.to; n++) if (view.trie.id[n] === selected && n !== scoring) copiesOfSelected.push(n);
  }

  return (
    <g className="tree-content">
      {/* Junction connectors, under the strips. */}
      {edges.map((e) => {
        if (e.parentEdge < 0) return null;
        const p = model.edges[e.parentEdge];
        const x = e.depth * step;
        if (p.y === e.y) return null;
        return (
          <path
            key={`c${e.index}`}
            d={`M${x},${rowY(p) + STRIP_H / 2} V${rowY(e) - STRIP_H / 2 - 4} q0,4 4,4`}
            fill="none"
            stroke="#5b6b7c"
            strokeWidth={1.5}
          />
        );
      })}
      {edges.map((e) => {
        const y = rowY(e) - STRIP_H / 2;
        const runs = edgeRuns(model, e);
        const x0 = nodeX(e, e.from);
        const x1 = nodeX(e, e.to + 1);
        const gap = perNode ? 1 : 0;
        const count = e.to - e.from + 1;
        const editLabel = e.forkEdits.map((k) => `edit ${k}`).join(', ');
        // Ids are written in the cells when they are wide; otherwise the edge carries a label.
        const fullLabel = showIds ? '' : count >= 12 ? `${e.label} · ${count} tok` : e.label;
        const room = Math.floor((Math.min(x1, xMax) - Math.max(x0, xMin) - 4 - (editLabel ? editLabel.length * 6.6 + 10 : 0)) / 6.4);
        const label = room >= fullLabel.length ? fullLabel : room >= 4 ? `${fullLabel.slice(0, room - 1)}…` : '';
        return (
          <g key={`e${e.index}`} data-edge={e.index}>
            {runs.map((r, i) => {
              const drift = targetColor && r.cls === CELL.target;
              if (perNode || drift) {
                const cells = [];
                const a = Math.max(r.from, e.from + Math.floor(xMin / step) - e.depth);
                const b = Math.min(r.to, e.from + Math.ceil(xMax / step) - e.depth);
                for (let n = a; n <= b; n++) {
                  const x = nodeX(e, n);
                  const fill = (drift && targetColor(view.trie.id[n])) || CELL_COLORS[r.cls as CellClass];
                  cells.push(
                    <rect
                      key={n}
                      x={x}
                      y={y}
                      width={Math.max(step - gap, 0.6)}
                      height={STRIP_H}
                      fill={fill}
                      rx={perNode ? 1.5 : 0}
                      data-node={n}
                      data-id={view.trie.id[n]}
                    />,
                  );
                  if (r.copy) cells.push(<rect key={`h${n}`} x={x} y={y} width={step - gap} height={STRIP_H} fill="url(#copy-hatch)" rx={1.5} />);
                  if (showIds && perNode) {
                    const id = view.trie.id[n];
                    cells.push(
                      <text
                        key={`t${n}`}
                        x={x + (step - gap) / 2}
                        y={y + STRIP_H / 2 + 0.5}
                        textAnchor="middle"
                        dominantBaseline="central"
                        fontSize={step >= 30 ? 11 : 9}
                        fontFamily={MONO}
                        fill={r.cls === CELL.target ? '#1b1f24' : '#eef2f6'}
                      >
                        {id}
                        {r.copy ? '′' : ''}
                      </text>,
                    );
                  }
                }
                return <g key={i}>{cells}</g>;
              }
              const a = clampX(nodeX(e, r.from));
              const b = clampX(nodeX(e, r.to + 1));
              if (b <= a) return null;
              return (
                <g key={i}>
                  <rect x={a} y={y} width={b - a} height={STRIP_H} fill={CELL_COLORS[r.cls as CellClass]} />
                  {r.copy && <rect x={a} y={y} width={b - a} height={STRIP_H} fill="url(#copy-hatch)" />}
                </g>
              );
            })}
            {label && (
              <text x={Math.max(x0, xMin) + 1} y={y - 5} fontSize={10.5} fill={INK.muted} fontFamily={MONO}>
                {label}
              </text>
            )}
            {e.forkEdits.length > 0 && (
              <g transform={`translate(${x1},${rowY(e)})`} data-tour="junction">
                <circle r={5} fill={INK.edit} stroke={INK.bg} strokeWidth={1.5} />
                <text x={-4} y={-STRIP_H / 2 - 5} textAnchor="end" fontSize={11} fontWeight={600} fill={INK.edit}>
                  {editLabel}
                </text>
              </g>
            )}
            {e.leafOf.length > 0 && (
              <text x={x1 + 8} y={rowY(e)} dominantBaseline="central" fontSize={12} fontWeight={600} fill={INK.text}>
                {e.leafOf.map((k) => `b${k}`).join(' = ')}
                {e.leafOf.includes(view.tree.K) ? (
                  <tspan fill={METHOD_BY_ID['naive-compressed'].color} fontWeight={500}>
                    {' '}
                    final walk
                  </tspan>
                ) : null}
              </text>
            )}
          </g>
        );
      })}
      {/* What each method shows the selected target: one lane per method under the strips. */}
      {overlays?.map((o, m) => {
        const color = METHOD_BY_ID[o.method].color;
        const alpha = o.method === method ? 1 : 0.7;
        const laneY = (edge: TreeEdge) => rowY(edge) + STRIP_H / 2 + 3 + m * (LANE_H + LANE_GAP);
        const bar = (key: string, r: { edge: number; from: number; to: number }, opacity: number) => {
          const e = model.edges[r.edge];
          const a = clampX(nodeX(e, r.from));
          const b = clampX(nodeX(e, r.to + 1));
          if (b <= a) return null;
          return <rect key={key} x={a} y={laneY(e)} width={Math.max(b - a - (perNode ? 1 : 0), 0.8)} height={LANE_H} fill={color} opacity={opacity} />;
        };
        let scoredAt = null;
        if (o.scoredAt >= 0) {
          const e = model.edges[model.edgeOf[o.scoredAt]];
          scoredAt = <rect x={nodeX(e, o.scoredAt)} y={laneY(e)} width={Math.max(step - (perNode ? 1 : 0), 2)} height={LANE_H} fill="#ffffff" />;
        }
        return (
          <g key={o.method} data-method={o.method}>
            {o.runs.map((r, i) => bar(`s${i}`, r, alpha))}
            {o.teacherRuns.map((r, i) => bar(`t${i}`, r, alpha * 0.4))}
            {scoredAt}
          </g>
        );
      })}
      {/* The selected target: its scoring node ringed, its replicated copies dashed. */}
      {scoring >= 0 &&
        (() => {
          const e = model.edges[model.edgeOf[scoring]];
          const x = nodeX(e, scoring);
          return (
            <rect
              x={x - 2.5}
              y={rowY(e) - STRIP_H / 2 - 2.5}
              width={Math.max(step - 1, 3) + 5}
              height={STRIP_H + 5}
              fill="none"
              stroke={INK.select}
              strokeWidth={2.2}
              rx={3}
              data-testid="tree-selected"
              data-tour="tree-selected"
            />
          );
        })()}
      {copiesOfSelected.map((n) => {
        const e = model.edges[model.edgeOf[n]];
        return (
          <rect
            key={`copy${n}`}
            x={nodeX(e, n) - 2}
            y={rowY(e) - STRIP_H / 2 - 2}
            width={Math.max(step - 1, 3) + 4}
            height={STRIP_H + 4}
            fill="none"
            stroke={INK.select}
            strokeDasharray="3 2"
            strokeWidth={1.2}
            rx={3}
          />
        );
      })}
    </g>
  );
});

function TreeTooltip({ node, x, y, view, model, width }: { node: number; x: number; y: number; view: ViewData; model: TreeModel; width: number }) {
  const id = view.trie.id[node];
  const kind = model.kind[node];
  const edge = model.edges[model.edgeOf[node]];
  const what =
    kind === NODE.target
      ? 'target, scored here'
      : kind === NODE.copy
        ? view.rollout.isTarget[id]
          ? `replicated copy of target ${id} (context, not scored)`
          : 'replicated context copy'
        : 'context';
  return (
    <div className="tooltip" style={{ left: Math.min(x + 14, width - 250), top: y + 14 }} role="tooltip" data-testid="tree-tooltip">
      <div>
        <strong>
          id {id}
          {kind === NODE.copy ? '′' : ''}
        </strong>{' '}
        <code>{tokenDisplay(view, id)}</code> · {roleName(view.rollout.roles[id])} · segment {view.rollout.segments[id]}
      </div>
      <div>{what}</div>
      <div className="muted">
        node {node} · position {view.trie.depth[node]} · on branch{edge.branches.length > 1 ? 'es' : ''} {edge.branches.join(', ')}
      </div>
    </div>
  );
}

const TREE_LEGEND_H = 52;

const TREE_KEYS: { label: string; color: string; hatch?: boolean }[] = [
  { label: 'prompt', color: CELL_COLORS[CELL.prompt] },
  { label: 'observation', color: CELL_COLORS[CELL.obs] },
  { label: 'inserted by an edit', color: CELL_COLORS[CELL.inserted] },
  { label: 'target (scored here)', color: CELL_COLORS[CELL.target] },
  { label: 'replicated context copy', color: CELL_COLORS[CELL.act], hatch: true },
];

function drawTreeLegend(p: ReturnType<typeof svgPainter>, x: number, y: number): void {
  let cx = x;
  const font = `11px ${FONT}`;
  for (const key of TREE_KEYS) {
    p.fillRect(key.color, cx, y + 8, 12, 12);
    if (key.hatch)
      for (let i = -8; i < 12; i += 4)
        p.line('#0f1419', 1.4, cx + Math.max(0, i), y + 8 + Math.max(0, -i), cx + Math.min(12, i + 12), y + 8 + Math.min(12, 12 - i));
    p.text(key.label, cx + 17, y + 14, { color: INK.text, font, baseline: 'middle' });
    cx += 30 + key.label.length * 6.2;
  }
  p.fillRect(INK.edit, cx, y + 10, 9, 9);
  p.text('junction (edit)', cx + 14, y + 14, { color: INK.text, font, baseline: 'middle' });
  cx = x;
  p.text('lanes under the strips — what each method conditions the selected target on:', cx, y + 36, { color: INK.muted, font, baseline: 'middle' });
  cx += 440;
  for (const m of METHOD_STYLES) {
    p.fillRect(m.color, cx, y + 33, 14, 5);
    p.text(m.label, cx + 19, y + 36, { color: INK.text, font, baseline: 'middle' });
    cx += 24 + m.label.length * 6.4 + 8;
  }
}

function TreeLegendHtml() {
  return (
    <ul className="legend" aria-label="Tree legend">
      {TREE_KEYS.map((key) => (
        <li key={key.label}>
          <i className={key.hatch ? 'hatch' : undefined} style={{ background: key.hatch ? undefined : key.color, backgroundColor: key.color }} />
          <TermText text={key.label} />
        </li>
      ))}
      <li>
        <i className="junction" />
        <TermText text="junction (edit)" />
      </li>
      <MethodKey caption="lanes: each method's prefix of the selected target (white: where it scores it):" />
    </ul>
  );
}
