// The packed 4D mask as a picture, beside the causal masks of the final walk and of the physical tape:
// three canvases fed by the store, each zoomed and panned by d3-zoom in one effect; hover names the
// pair under the pointer, a click on a target's row selects that target. Exports as SVG or PNG.
import { select, zoom as d3zoom, zoomIdentity } from 'd3';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { MASK_CELL, maskCoverageSteps, maskOf, maskCell, type MaskMethod, type MaskModel } from '../../core/maskModel';
import type { ViewData } from '../../core/viewData';
import { canvasToPng, downloadBlob, downloadText, fileStem } from '../../export/download';
import { canvasPainter, svgPainter, type Painter } from '../../export/painter';
import { Term, TermText } from '../../glossary/Term';
import { useWorkbench } from '../../store';
import { INK, METHOD_BY_ID } from '../../../present/palette';
import { ExportButtons } from '../ExportButtons';
import { sizedContext, useSize } from '../common/useSize';
import { drawMask, MASK_COLORS, maskGeometry, maskHit, maskRaster, sameRaster, type MaskCount, type MaskFrame, type MaskRaster, type MaskZoom } from './draw';
import './mask.css';

const TITLES: Record<MaskMethod, string> = {
  'packed-4d': 'Packed 4D mask: the tree in one sequence',
  'naive-compressed': 'Naive-Compressed: causal over the final walk',
  'naive-full': 'Naive-Full: causal over the physical tape',
};

function figureNote(model: MaskModel): string {
  const { totals } = model;
  const base = `${model.n} × ${model.n} · ${model.visiblePairs} visible pairs`;
  if (model.method === 'packed-4d') return `${base} · every target row sees exactly its live prefix`;
  if (model.method === 'naive-compressed') return `${base} · ${totals.missing} missing keys, ${totals.future} future cells in ${totals.targetRows} target rows`;
  return `${base} · ${totals.stale} stale cells in ${totals.targetRows} target rows`;
}

interface Hover {
  query: number;
  key: number;
  x: number;
  y: number;
}

export function MaskView() {
  const view = useWorkbench((s) => s.view);
  const selected = useWorkbench((s) => s.selectedTarget);
  const masks = useMemo(
    () => (view ? { packed: maskOf(view, 'packed-4d'), final: maskOf(view, 'naive-compressed'), full: maskOf(view, 'naive-full') } : null),
    [view],
  );
  const frames = useRef(new Map<MaskMethod, () => MaskFrame | null>());
  if (!view || !masks) return null;

  const exportFigures = (painter: (w: number, h: number) => Painter) => {
    const list = (['packed-4d', 'naive-compressed', 'naive-full'] as const).map((m) => frames.current.get(m)?.()).filter((f): f is MaskFrame => !!f);
    const width = list.reduce((w, f) => w + f.width + 12, 0);
    const height = Math.max(...list.map((f) => f.height)) + 22;
    const p = painter(width, height);
    let x = 0;
    for (const f of list) {
      p.text(TITLES[f.model.method], x + 8, 14, { color: INK.text, font: '600 12px Inter, system-ui, sans-serif' });
      p.pushClip(x, 22, f.width, f.height);
      drawShifted(p, f, x, 22);
      p.popClip();
      x += f.width + 12;
    }
    return { p, width, height };
  };
  const stem = fileStem(view.rollout.id);
  const exportSvg = () => {
    const { p } = exportFigures((w, h) => svgPainter(w, h, INK.bg));
    downloadText(p.toString(), `${stem}-masks.svg`, 'image/svg+xml');
  };
  const exportPng = async () => {
    let canvas: HTMLCanvasElement | null = null;
    exportFigures((w, h) => {
      canvas = document.createElement('canvas');
      canvas.width = w * 2;
      canvas.height = h * 2;
      const ctx = canvas.getContext('2d')!;
      ctx.scale(2, 2);
      return canvasPainter(ctx);
    });
    if (canvas) downloadBlob(await canvasToPng(canvas), `${stem}-masks.png`);
  };

  return (
    <section className="panel mask-panel" aria-label="Attention masks" data-tour="mask">
      <header className="panel-head">
        <h2>
          Attention masks: who each query sees (<Term id="packed-4d-mask">packed 4D mask</Term> vs the flat sequences)
        </h2>
        <span className="hint">rows: queries · columns: keys · wheel: zoom · drag: pan · click a row: its target</span>
        <ExportButtons name="masks" onPng={exportPng} onSvg={exportSvg} />
      </header>
      <div className="mask-grid">
        <MaskFigure model={masks.packed} view={view} selected={selected} register={frames.current} big />
        <div className="mask-side">
          <MaskFigure model={masks.final} view={view} selected={selected} register={frames.current} />
          <MaskFigure model={masks.full} view={view} selected={selected} register={frames.current} />
        </div>
      </div>
      <MaskLegend />
    </section>
  );
}

/**
 * The three figures draw one per task, in turn: on a tree of a million nodes each draw is tens of
 * milliseconds (its mask aggregated to the canvas's pixels), and three in one animation frame would
 * hold the main thread for their sum. A job returns false to be called again in a later task (a dense
 * mask counts its pixels in slices first: maskCoverageSteps); a figure asked again before its turn draws once, with the latest.
 */
const drawQueue: (() => boolean)[] = [];
function runDraws(): void {
  const job = drawQueue[0];
  if (job?.()) drawQueue.shift();
  if (drawQueue.length) setTimeout(runDraws, 0);
}

/** Milliseconds of counting a dense mask's pixels in one task before the rest waits for the next. */
const COUNT_BUDGET_MS = 12;

function useTaskDraw(
  canvasRef: React.RefObject<HTMLCanvasElement | null>,
  size: { width: number; height: number },
  draw: (canvas: HTMLCanvasElement, width: number, height: number) => boolean,
): () => void {
  const latest = useRef({ draw, size });
  latest.current = { draw, size };
  const pending = useRef(false);
  const job = useRef(() => {
    const { draw, size } = latest.current;
    const done = !canvasRef.current || draw(canvasRef.current, size.width, size.height);
    if (done) pending.current = false;
    return done;
  });
  useEffect(
    () => () => {
      const at = drawQueue.indexOf(job.current);
      if (at >= 0) drawQueue.splice(at, 1);
      pending.current = false;
    },
    [],
  );
  return useCallback(() => {
    if (pending.current) return;
    pending.current = true;
    drawQueue.push(job.current);
    if (drawQueue.length === 1) setTimeout(runDraws, 0);
  }, []);
}

/**
 * A dense figure's pixel count (maskCoverage) for the raster it is drawn at, counted COUNT_BUDGET_MS at a
 * time: `step` returns the count once whole, or null while counting (call it again in a later task).
 * A frame of another raster (zoomed, resized) starts a count of its own; the last whole count is kept.
 */
function createCounter() {
  let counted: MaskCount | null = null;
  let counting: { raster: MaskRaster; steps: Generator<void, Float64Array, void> } | null = null;
  return (raster: MaskRaster): MaskCount | null => {
    if (counted && sameRaster(counted, raster)) return counted;
    if (!counting || !sameRaster(counting.raster, raster)) {
      const { model, x0, y0, size, W, H } = raster;
      counting = { raster, steps: maskCoverageSteps(model.end, model.n, x0, y0, size, W, H) };
    }
    const started = performance.now();
    do {
      const step = counting.steps.next();
      if (step.done) {
        counted = { ...counting.raster, count: step.value };
        counting = null;
        return counted;
      }
    } while (performance.now() - started < COUNT_BUDGET_MS);
    return null;
  };
}

/** Draws a frame at (dx, dy) of a larger surface (the export places three figures side by side). */
function drawShifted(p: Painter, frame: MaskFrame, dx: number, dy: number): void {
  const moved: Painter = {
    fillRect: (color, x, y, w, h, alpha) => p.fillRect(color, x + dx, y + dy, w, h, alpha),
    strokeRect: (color, width, x, y, w, h) => p.strokeRect(color, width, x + dx, y + dy, w, h),
    line: (color, width, x0, y0, x1, y1, dash) => p.line(color, width, x0 + dx, y0 + dy, x1 + dx, y1 + dy, dash),
    text: (text, x, y, style) => p.text(text, x + dx, y + dy, style),
    pushClip: (x, y, w, h) => p.pushClip(x + dx, y + dy, w, h),
    popClip: () => p.popClip(),
    flush: () => p.flush(),
    pixels: p.pixels ? (x, y, w, h, paint) => p.pixels!(x + dx, y + dy, w, h, paint) : undefined,
  };
  drawMask(moved, frame);
}

function MaskFigure({
  model,
  view,
  selected,
  register,
  big,
}: {
  model: MaskModel;
  view: ViewData;
  selected: number | null;
  register: Map<MaskMethod, () => MaskFrame | null>;
  big?: boolean;
}) {
  const selectTarget = useWorkbench((s) => s.selectTarget);
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const { width, height } = useSize(wrapRef);
  const zoomRef = useRef<MaskZoom>({ k: 1, x: 0, y: 0 });
  const [hover, setHover] = useState<Hover | null>(null);
  const drawnModel = useRef<MaskModel | null>(null);

  const frameOf = useCallback(
    (w: number, h: number): MaskFrame | null => (w < 40 || h < 40 ? null : { model, width: w, height: h, zoom: zoomRef.current, cls: view.tape.cls, selected }),
    [model, view, selected],
  );
  useEffect(() => {
    register.set(model.method, () => frameOf(width, height));
  }, [register, model.method, frameOf, width, height]);

  const counter = useRef(createCounter());
  const schedule = useTaskDraw(canvasRef, { width, height }, (canvas, w, h) => {
    const frame = frameOf(w, h);
    if (!frame) return true;
    const raster = maskRaster(frame, window.devicePixelRatio || 1);
    const counted = raster ? counter.current(raster) : undefined;
    if (counted === null) return false;
    drawMask(canvasPainter(sizedContext(canvas, w, h)), { ...frame, counted });
    const g = maskGeometry(model, w, h);
    Object.assign(canvas.dataset, {
      plotLeft: String(g.left + frame.zoom.x),
      plotTop: String(g.top + frame.zoom.y),
      cell: String(frame.zoom.k * g.cell),
      selectedRow: String(selected !== null ? model.rowOf[selected] : -1),
    });
    if (drawnModel.current !== model) {
      drawnModel.current = model;
      performance.mark(`mw:mask-${model.method}-drawn`); // like ../perf.ts's marks, for tests and screenshots
    }
    return true;
  });
  useEffect(() => schedule(), [schedule, frameOf, width, height]);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || width < 40 || height < 40) return;
    const g = maskGeometry(model, width, height);
    const world = model.n * g.cell;
    const behavior = d3zoom<HTMLCanvasElement, unknown>()
      .scaleExtent([1, Math.max(1, 40 / g.cell)])
      .extent([
        [g.left, g.top],
        [g.left + g.plotW, g.top + g.plotH],
      ])
      .translateExtent([
        [g.left, g.top],
        [g.left + Math.max(world, g.plotW), g.top + Math.max(world, g.plotH)],
      ])
      .on('zoom', (event: { transform: { k: number; x: number; y: number } }) => {
        const t = event.transform;
        zoomRef.current = { k: t.k, x: t.x + (t.k - 1) * g.left, y: t.y + (t.k - 1) * g.top };
        schedule();
      });
    const selection = select(canvas);
    selection.call(behavior).on('dblclick.zoom', null);
    selection.call(behavior.transform, zoomIdentity);
    return () => {
      selection.on('.zoom', null);
    };
  }, [model, width, height, schedule]);

  const locate = (event: React.MouseEvent<HTMLCanvasElement>): Hover | null => {
    const rect = event.currentTarget.getBoundingClientRect();
    const x = event.clientX - rect.left;
    const y = event.clientY - rect.top;
    const g = maskGeometry(model, width, height);
    const hit = maskHit(model, g, zoomRef.current, x - g.left, y - g.top);
    return hit ? { ...hit, x, y } : null;
  };

  const style = METHOD_BY_ID[model.method];
  return (
    <figure className={big ? 'mask-figure big' : 'mask-figure'} data-tour={`mask-${model.method}`} data-testid={`mask-${model.method}`}>
      <figcaption>
        <span className="title" style={{ color: style.color }}>
          <TermText text={TITLES[model.method]} />
        </span>
        <span className="note" data-testid={`mask-note-${model.method}`}>
          <TermText text={figureNote(model)} />
        </span>
      </figcaption>
      <div className="mask-canvas" ref={wrapRef}>
        <canvas
          ref={canvasRef}
          style={{ width, height }}
          data-testid={`mask-canvas-${model.method}`}
          data-n={model.n}
          data-visible-pairs={model.visiblePairs}
          onMouseMove={(e) => setHover(locate(e))}
          onMouseLeave={() => setHover(null)}
          onClick={(e) => {
            const hit = locate(e);
            if (hit && model.rowTarget[hit.query] >= 0) selectTarget(model.rowTarget[hit.query]);
          }}
        />
        {hover && <MaskTooltip hover={hover} model={model} view={view} width={width} />}
      </div>
    </figure>
  );
}

function MaskTooltip({ hover, model, view, width }: { hover: Hover; model: MaskModel; view: ViewData; width: number }) {
  const { query, key } = hover;
  const name = (i: number) => `${model.ids[i]}${model.copy[i] ? '′' : ''}`;
  const t = model.rowTarget[query];
  const cell = maskCell(model, query, key);
  let what: string;
  if (cell === MASK_CELL.hidden) what = key > query ? 'hidden: the key comes after the query' : 'hidden: the key is not on the query’s path';
  else if (cell === MASK_CELL.stale) what = `wrong: evicted by edit ${model.evictedBy[model.ids[key]]}, before target ${t} was written (stale context)`;
  else if (cell === MASK_CELL.future) what = `wrong: written in segment ${model.segment[model.ids[key]]}, after target ${t} (time-travel)`;
  else what = 'visible';
  const row =
    t >= 0
      ? `row of target ${t} (segment ${model.segment[t]}): its live prefix has ${view.tree.ownPosition[t]} ids${model.missing[query] ? `, ${model.missing[query]} of them missing here` : ''}`
      : model.copy[query]
        ? 'a replicated copy: context for a later branch'
        : 'a context row';
  return (
    <div className="tooltip" style={{ left: Math.min(hover.x + 14, width - 280), top: hover.y + 14 }} role="tooltip" data-testid="mask-tooltip">
      <div>
        <strong>query {name(query)}</strong> (index {query}) → <strong>key {name(key)}</strong> (index {key})
      </div>
      <div>{what}</div>
      <div className="muted">{row}</div>
    </div>
  );
}

function MaskLegend() {
  const swatch = (color: string) => <i style={{ background: color }} />;
  return (
    <ul className="legend" aria-label="Mask legend">
      <li>{swatch('#52708f')}visible pair (the key’s colour, as in the staircase)</li>
      <li>
        {swatch('#34404c')}
        <TermText text="dim: the key is a replicated copy" />
      </li>
      <li>{swatch(MASK_COLORS.selected)}the selected target’s row: the keys it sees</li>
      <li>{swatch(MASK_COLORS.target)}a target row’s own token</li>
      <li>
        {swatch(MASK_COLORS.stale)}
        <TermText text="stale: evicted before the target was written" />
      </li>
      <li>
        {swatch(MASK_COLORS.future)}
        <TermText text="future: written after the target" />
      </li>
      <li>
        {swatch(MASK_COLORS.missing)}
        <TermText text="missing (gutter): live prefix keys the row cannot see" />
      </li>
      <li>
        <i className="edit-rule" />
        <TermText text="a branch (b) or segment (s) starts" />
      </li>
    </ul>
  );
}
