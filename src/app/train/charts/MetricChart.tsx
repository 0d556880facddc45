// A live chart on a canvas. React renders the frame once; new metric records reach the canvas
// through a store subscription (the history's version number), coalesced to one draw per frame.
import { useEffect, useRef } from 'react';
import { useWorkbench } from '../../store';
import { downloadText } from '../../export/download';
import { sizedContext, useFrameDraw, useSize } from '../../views/common/useSize';
import { INK } from '../../../present/palette';
import { orderedMethods } from '../../../run/config';
import type { WorkbenchState } from '../../store/types';
import { drawChart, seriesOf } from './draw';
import type { ChartSpec } from './specs';
import { canvasSurface, svgSurface } from './surface';
import { referenceSeries, shippedPhase } from './reference';
import { TermText } from '../../glossary/Term';

function frameData(state: WorkbenchState, spec: ChartSpec) {
  const run = state.trainRun;
  const config = run?.config ?? state.trainConfig;
  const lanes = new Map(orderedMethods([...state.trainHistory.byMethod.keys()]).map((m) => [m, state.trainHistory.byMethod.get(m)!]));
  // Lanes of the run with no record yet still get their (empty) series.
  for (const m of orderedMethods(run?.config.methods ?? [])) if (!lanes.has(m)) lanes.set(m, []);
  const frame = {
    totalSteps: run?.config.steps || undefined,
    references: spec.reference ? referenceSeries(config) : [],
    run: run !== null && run !== undefined,
  };
  return { objective: config.objective, series: seriesOf(spec, lanes, config.objective), frame };
}

export function MetricChart({ spec }: { spec: ChartSpec }) {
  const objective = useWorkbench((s) => s.trainRun?.config.objective ?? s.trainConfig.objective);
  const firesNote = useWorkbench((s) => (spec.id === 'kl' ? klFires(s) : null));
  const reference = useWorkbench((s) => (spec.reference ? shippedPhase(s.trainRun?.config ?? s.trainConfig) : null));
  const wrapRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const { width, height } = useSize(wrapRef);
  const schedule = useFrameDraw(canvasRef, { width, height }, (canvas, w, h) => {
    if (w < 40 || h < 40) return;
    const ctx = sizedContext(canvas, w, h);
    ctx.fillStyle = INK.panel;
    ctx.fillRect(0, 0, w, h);
    const { series, frame } = frameData(useWorkbench.getState(), spec);
    drawChart(canvasSurface(ctx), spec, series, { ...frame, width: w, height: h });
    canvas.dataset.points = String(series.reduce((n, s) => n + s.points.length, 0));
    canvas.dataset.references = String(frame.references.length);
    canvas.dataset.referencePoints = String(frame.references.reduce((n, r) => n + r.points.length, 0));
  });

  useEffect(() => schedule(), [schedule, spec, width, height, objective]);
  useEffect(
    () =>
      useWorkbench.subscribe((state, prev) => {
        // The config too: without a run, the dashed reference curves follow the draft's methods and λ.
        const changed = state.trainHistoryVersion !== prev.trainHistoryVersion || state.trainRun !== prev.trainRun || state.trainConfig !== prev.trainConfig;
        if (changed) schedule();
      }),
    [schedule],
  );

  const exportSvg = () => {
    const state = useWorkbench.getState();
    const { objective, series, frame } = frameData(state, spec);
    const w = 640;
    const h = 300;
    const svg = svgSurface(w, h, INK.panel);
    drawChart(svg, spec, series, { ...frame, width: w, height: h, header: { title: spec.title, note: spec.note(objective) } });
    downloadText(svg.document(), `${state.trainRun?.id ?? 'run'}-${spec.id}.svg`, 'image/svg+xml');
  };

  return (
    <figure className="train-chart" data-testid={`chart-${spec.id}`}>
      <figcaption>
        <span className="title">
          <TermText text={spec.title} />
        </span>
        {firesNote && (
          <span className="fires" data-testid="kl-fires">
            {firesNote}
          </span>
        )}
        <button type="button" className="svg" onClick={exportSvg} title="Save this chart as SVG" data-testid={`chart-svg-${spec.id}`}>
          SVG
        </button>
        <span className="note">
          <TermText text={spec.note(objective)} />
          {reference && (
            <span className="reference" data-testid={`chart-reference-${spec.id}`}>
              {'. '}
              Dashed: <code>mw experiment learning</code>, the same run from {reference.checkpoint}, mean over {reference.seeds.length} seeds (band: their
              range) on {reference.evalPrompts} held-out prompts each.
            </span>
          )}
        </span>
      </figcaption>
      <div className="chart-canvas" ref={wrapRef}>
        <canvas ref={canvasRef} style={{ width: `${width}px`, height: `${height}px` }} />
      </div>
    </figure>
  );
}

/** "fires on 40% of batches": SDCC's KL is gated to batches with a diverging leaf. */
function klFires(state: WorkbenchState): string | null {
  if (!state.trainLatest.sdcc) return null;
  const lane = state.trainHistory.byMethod.get('sdcc') ?? [];
  const fired = lane.filter((r) => r.klFired).length;
  return `fires on ${lane.length ? Math.round((100 * fired) / lane.length) : 0}% of batches`;
}
