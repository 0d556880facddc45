// The staircase of live contexts: a canvas fed by the store (rows x physical tape), panned and
// zoomed by d3-zoom attached to the canvas in one effect; hover shows a token, click selects a target.
import { bisectLeft, select, zoom as d3zoom, zoomIdentity, type ZoomBehavior } from 'd3';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { roleName, tokenDisplay, tokenGlyph, type ViewData } from '../../core/viewData';
import { canvasPainter, svgPainter } from '../../export/painter';
import { canvasToPng, downloadBlob, downloadText, fileStem } from '../../export/download';
import { useWorkbench } from '../../store';
import { ExportButtons } from '../ExportButtons';
import { MethodKey } from '../MethodKey';
import { TermText } from '../../glossary/Term';
import { ColorToggle, useTargetColor } from '../common/useTargetColor';
import { INK } from '../../../present/palette';
import { CELL, CELL_COLORS, CELL_LEGEND } from '../../core/cells';
import { markDrawn, measureFrame } from '../common/perf';
import { sizedContext, useFrameDraw, useSize } from '../common/useSize';
import {
  drawStaircase,
  drawStaircaseLegend,
  frameRows,
  geometry,
  hitTest,
  lensSpace,
  LEGEND_H,
  MARGIN,
  MAX_ROW_H,
  type StaircaseFrame,
  type ZoomState,
} from './draw';
import { buildStaircase, cellClass, type StaircaseModel } from '../../core/staircaseModel';
import { lanesOf, selectedViews } from '../../core/methodViews';
import { textMarksOf, textMarksChanged } from '../common/useTextMarks';
import { drawTextMarks } from './textMarks';

interface Hover {
  row: number;
  id: number;
  x: number;
  y: number;
}

const STATE_TEXT: Record<number, string> = {
  [CELL.none]: 'not created yet',
  [CELL.prompt]: 'live',
  [CELL.obs]: 'live',
  [CELL.act]: 'live (an earlier output)',
  [CELL.inserted]: 'live',
  [CELL.evicted]: 'evicted',
  [CELL.target]: 'target',
};

export function StaircaseView() {
  const view = useWorkbench((s) => s.view);
  const rows = useWorkbench((s) => s.rows);
  const setRows = useWorkbench((s) => s.setRows);
  const selected = useWorkbench((s) => s.selectedTarget);
  const method = useWorkbench((s) => s.method);
  const selectTarget = useWorkbench((s) => s.selectTarget);
  const colorBy = useWorkbench((s) => s.colorBy);
  const setColorBy = useWorkbench((s) => s.setColorBy);
  const targetColor = useTargetColor();

  const model = useMemo(() => (view ? buildStaircase(view.tape, rows) : null), [view, rows]);
  const views = useMemo(() => selectedViews(view, selected), [view, selected]);
  const lanes = useMemo(() => (views ? lanesOf(views) : null), [views]);

  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const { width, height } = useSize(wrapRef);
  const zoomRef = useRef<ZoomState>({ k: 1, x: 0, y: 0 });
  const behaviorRef = useRef<ZoomBehavior<HTMLCanvasElement, unknown> | null>(null);
  const drawnModel = useRef<StaircaseModel | null>(null);
  const [hover, setHover] = useState<Hover | null>(null);
  const setIdHover = useWorkbench((s) => s.setHover);
  // The context panes' hover and find matches, on a canvas over the cells: they change without a
  // redraw of the cells (or a render of this view), and follow every zoom and pan.
  const marksRef = useRef<HTMLCanvasElement>(null);
  const paintMarks = (w: number, h: number) => {
    const canvas = marksRef.current;
    const frame = frameOf(zoomRef.current, w, h);
    if (!canvas || !frame) return;
    const ctx = sizedContext(canvas, w, h);
    ctx.clearRect(0, 0, w, h);
    const marks = textMarksOf(useWorkbench.getState());
    drawTextMarks(canvasPainter(ctx), frame, marks);
    if (canvasRef.current) canvasRef.current.dataset.hover = marks.hover ? `${marks.hover.first}-${marks.hover.end}` : '';
  };
  const scheduleMarks = useFrameDraw(marksRef, { width, height }, (_canvas, w, h) => paintMarks(w, h));
  useEffect(() => useWorkbench.subscribe((s, prev) => textMarksChanged(s, prev) && scheduleMarks()), [scheduleMarks]);

  const frameOf = useCallback(
    (zoom: ZoomState, w: number, h: number): StaircaseFrame | null => {
      if (!model || !view || w < 20 || h < 20) return null;
      const row = selected !== null && view.rollout.isTarget[selected] ? model.targetRow[bisectLeft(model.targets, selected)] : -1;
      return {
        model,
        width: w,
        height: h,
        zoom,
        method,
        selected: row >= 0 && lanes && selected !== null ? { id: selected, row, lanes } : null,
        glyph: view.textual ? (id) => tokenGlyph(view, id) : undefined,
        targetColor: targetColor ?? undefined,
      };
    },
    [model, view, selected, lanes, method, targetColor],
  );

  const schedule = useFrameDraw(canvasRef, { width, height }, (canvas, w, h) => {
    const frame = frameOf(zoomRef.current, w, h);
    if (!frame) return;
    const start = performance.now();
    const ctx = sizedContext(canvas, w, h);
    drawStaircase(canvasPainter(ctx), frame);
    paintMarks(w, h);
    // Test hooks: where cells are, so an end-to-end test can click one.
    const g = geometry(frame.model, w, h);
    Object.assign(canvas.dataset, {
      plotLeft: String(MARGIN.left + frame.zoom.x),
      plotTop: String(MARGIN.top + frame.zoom.y),
      cellWidth: String(frame.zoom.k * g.cw),
      rowHeight: String(frame.zoom.k * g.rh),
    });
    measureFrame('staircase', start);
    if (drawnModel.current !== frame.model) {
      drawnModel.current = frame.model;
      markDrawn('staircase');
    }
  });
  useEffect(() => schedule(), [schedule, frameOf, width, height]);

  // d3-zoom on the canvas: wheel zooms about the pointer, drag pans; reset when the data changes.
  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || !model || width < 20 || height < 20) return;
    const g = geometry(model, width, height);
    const worldW = Math.max(model.length * g.cw, g.plotW);
    const worldH = Math.max(model.rowCount * g.rh, g.plotH);
    const behavior = d3zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([1, Math.max(1, 40 / Math.min(g.cw, g.rh))])
      .extent([
        [MARGIN.left, MARGIN.top],
        [MARGIN.left + g.plotW, MARGIN.top + g.plotH],
      ])
      .translateExtent([
        [MARGIN.left, MARGIN.top - 20],
        [MARGIN.left + worldW, MARGIN.top + worldH + 110],
      ])
      .on('zoom', (event: { transform: { k: number; x: number; y: number } }) => {
        const t = event.transform;
        const next = { k: t.k, x: t.x + (t.k - 1) * MARGIN.left, y: t.y + (t.k - 1) * MARGIN.top };
        const z = zoomRef.current;
        if (next.k === z.k && next.x === z.x && next.y === z.y) return; // a drag against the edge
        zoomRef.current = next;
        schedule();
      });
    const selection = select(canvas);
    selection.call(behavior).on('dblclick.zoom', null);
    selection.call(behavior.transform, zoomIdentity);
    behaviorRef.current = behavior;
    return () => {
      selection.on('.zoom', null);
      behaviorRef.current = null;
    };
  }, [model, width, height, schedule]);

  // Keep the selected target in view (keyboard navigation walks off screen otherwise).
  useEffect(() => {
    const canvas = canvasRef.current;
    const behavior = behaviorRef.current;
    if (!canvas || !behavior || !model || selected === null || width < 20) return;
    const i = bisectLeft(model.targets, selected);
    if (model.targets[i] !== selected) return;
    const g = geometry(model, width, height);
    const z = zoomRef.current;
    const rowPx = z.k * g.rh;
    const colPx = z.k * g.cw;
    const top = z.y + model.targetRow[i] * rowPx;
    const x = z.x + selected * colPx;
    let dy = 0;
    let dx = 0;
    const below = rowPx + lensSpace(rowPx, 5);
    if (top < 0) dy = -top + 8;
    else if (top + below > g.plotH) dy = g.plotH - (top + below);
    if (x < 0) dx = -x + 8;
    else if (x + colPx > g.plotW) dx = g.plotW - x - colPx - 8;
    if (dx || dy) select(canvas).call(behavior.translateBy, dx / z.k, dy / z.k);
  }, [selected, model, width, height]);

  const locate = (event: React.MouseEvent<HTMLCanvasElement>): Hover | null => {
    if (!model) return null;
    const rect = event.currentTarget.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const frame = frameOf(zoomRef.current, width, height);
    if (!frame) return null;
    const g = geometry(model, width, height);
    const hit = hitTest(model, g, zoomRef.current, frameRows(frame, g), x - MARGIN.left, y - MARGIN.top);
    return hit && x >= MARGIN.left && y >= MARGIN.top ? { ...hit, x, y } : null;
  };

  const onClick = (event: React.MouseEvent<HTMLCanvasElement>) => {
    const hit = locate(event);
    if (!hit || !model || !view) return;
    const cls = cellClass(model, hit.row, hit.id);
    if (cls !== CELL.none && view.rollout.isTarget[hit.id]) selectTarget(hit.id);
    else if (model.rowTarget[hit.row] >= 0) selectTarget(model.rowTarget[hit.row]);
  };

  const exportPng = async () => {
    const frame = frameOf(zoomRef.current, width, height);
    if (!frame || !view) return;
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = width * scale;
    canvas.height = (height + LEGEND_H) * scale;
    const ctx = canvas.getContext('2d')!;
    ctx.scale(scale, scale);
    const p = canvasPainter(ctx);
    drawStaircase(p, frame);
    p.fillRect(INK.bg, 0, height, width, LEGEND_H);
    drawStaircaseLegend(p, MARGIN.left, height, width - MARGIN.left);
    downloadBlob(await canvasToPng(canvas), `${fileStem(view.rollout.id)}-staircase.png`);
  };
  const exportSvg = () => {
    const frame = frameOf(zoomRef.current, width, height);
    if (!frame || !view) return;
    const p = svgPainter(width, height + LEGEND_H, INK.bg);
    drawStaircase(p, frame);
    drawStaircaseLegend(p, MARGIN.left, height, width - MARGIN.left);
    downloadText(p.toString(), `${fileStem(view.rollout.id)}-staircase.svg`, 'image/svg+xml');
  };

  // Small rollouts get the height they need, large ones a share of the window.
  const fitHeight = model ? MARGIN.top + MARGIN.bottom + model.rowCount * MAX_ROW_H + lensSpace(MAX_ROW_H, 5) + 8 : 300;

  return (
    <section className="panel staircase-panel" aria-label="Staircase of live contexts" data-tour="staircase">
      <header className="panel-head">
        <h2>Staircase of live contexts</h2>
        <div className="segmented" role="group" aria-label="Staircase rows">
          <button type="button" aria-pressed={rows === 'step'} onClick={() => setRows('step')} data-testid="rows-step">
            per decode step
          </button>
          <button type="button" aria-pressed={rows === 'segment'} onClick={() => setRows('segment')} data-testid="rows-segment">
            per segment
          </button>
        </div>
        <ColorToggle colorBy={colorBy} setColorBy={setColorBy} />
        <span className="hint">wheel: zoom · drag: pan · ←/→: targets</span>
        <ExportButtons name="staircase" onPng={exportPng} onSvg={exportSvg} />
      </header>
      <div className="canvas-wrap" ref={wrapRef} style={{ height: `min(${fitHeight}px, clamp(300px, 46vh, 600px))` }}>
        <canvas
          ref={canvasRef}
          data-testid="staircase-canvas"
          data-tour="staircase-canvas"
          data-rows={model?.rowCount ?? 0}
          data-columns={model?.length ?? 0}
          style={{ width, height }}
          onMouseMove={(e) => {
            const hit = locate(e);
            setHover(hit);
            setIdHover(hit && model && cellClass(model, hit.row, hit.id) !== CELL.none ? { first: hit.id, end: hit.id + 1 } : null);
          }}
          onMouseLeave={() => {
            setHover(null);
            setIdHover(null);
          }}
          onClick={onClick}
        />
        <canvas ref={marksRef} className="text-marks" style={{ width, height }} aria-hidden="true" />
        {hover && view && model && <StaircaseTooltip hover={hover} view={view} model={model} width={width} />}
      </div>
      <ul className="legend" aria-label="Cell legend" data-tour="staircase-legend">
        {CELL_LEGEND.map((item) => (
          <li key={item.cls}>
            <i style={{ background: CELL_COLORS[item.cls] }} />
            <TermText text={item.label} />
          </li>
        ))}
        <li>
          <i className="edit-rule" />
          <TermText text="edit" />
        </li>
        <MethodKey caption="lens under the selected step — what each method conditions it on:" />
      </ul>
    </section>
  );
}

function StaircaseTooltip({ hover, view, model, width }: { hover: Hover; view: ViewData; model: StaircaseModel; width: number }) {
  const { id, row } = hover;
  const cls = cellClass(model, row, id);
  const { rollout } = view;
  const rowTarget = model.rowTarget[row];
  const inserted = view.insertedBy[id];
  let state = STATE_TEXT[cls];
  if (cls === CELL.target) state = rowTarget === id ? 'the token decoded at this step' : 'a target this branch scores';
  if (cls === CELL.inserted && inserted) state = `live, inserted by edit ${inserted}`;
  const left = Math.min(hover.x + 14, width - 240);
  return (
    <div className="tooltip" style={{ left, top: hover.y + 14 }} role="tooltip" data-testid="staircase-tooltip">
      <div>
        <strong>id {id}</strong> <code>{tokenDisplay(view, id)}</code>
        <span className="muted"> (token {rollout.tokens[id]})</span>
      </div>
      <div>
        {roleName(rollout.roles[id])}
        {rollout.isTarget[id] ? ' · target' : ''} · segment {rollout.segments[id]}
        {inserted ? ` · inserted by edit ${inserted}` : ''}
      </div>
      <div className="muted">
        {model.mode === 'step' ? `at step t ${rowTarget}` : `in branch ${model.rowSegment[row]}`}: {state}
      </div>
    </div>
  );
}
