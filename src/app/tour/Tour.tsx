// The guided tour on the live views: a bar docked at the bottom of the window (title, caption,
// progress, Back / Next, Escape closes) and rings around what the step talks about, with the rest of
// the page dimmed but live. The step's setup runs in the store (tourSlice); this view only draws,
// scrolls the first highlight into sight, and opens a collapsed panel the step needs.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { MarkdownLine } from '../glossary/Markdown';
import { useWorkbench } from '../store';
import { TOUR_STEPS, type TourHighlight } from '../core/tourSteps';
import './tour.css';

interface Ring {
  /** Index of the highlight in the step. */
  index: number;
  x: number;
  y: number;
  w: number;
  h: number;
  label?: string;
}

const PAD = 4;

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName));
}

/** Document-space boxes of a highlight: every element a selector matches, or a band of staircase ids. */
function boxesOf(h: TourHighlight, index: number): Ring[] {
  const sx = window.scrollX;
  const sy = window.scrollY;
  if (typeof h === 'string') {
    return Array.from(document.querySelectorAll<Element>(h)).flatMap((el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 || r.height > 0 ? [{ index, x: r.left + sx - PAD, y: r.top + sy - PAD, w: r.width + 2 * PAD, h: r.height + 2 * PAD }] : [];
    });
  }
  const canvas = document.querySelector<HTMLCanvasElement>('[data-testid="staircase-canvas"]');
  if (!canvas?.dataset.cellWidth) return [];
  const r = canvas.getBoundingClientRect();
  const cw = Number(canvas.dataset.cellWidth);
  const left = Number(canvas.dataset.plotLeft);
  const top = Number(canvas.dataset.plotTop);
  const x0 = Math.max(r.left + left + h.band[0] * cw, r.left);
  const x1 = Math.min(r.left + left + h.band[1] * cw, r.right);
  if (x1 <= x0) return [];
  return [{ index, x: x0 + sx - 2, y: r.top + sy + top - 4, w: x1 - x0 + 4, h: r.height - top - 2, label: h.label }];
}

function sameRings(a: Ring[], b: Ring[]): boolean {
  return (
    a.length === b.length &&
    a.every(
      (r, i) =>
        r.index === b[i].index && Math.abs(r.x - b[i].x) < 0.5 && Math.abs(r.y - b[i].y) < 0.5 && Math.abs(r.w - b[i].w) < 0.5 && Math.abs(r.h - b[i].h) < 0.5,
    )
  );
}

/** Keeps the rings on their elements while views redraw, resize and scroll. */
function useRings(highlight: readonly TourHighlight[] | null): Ring[] {
  const [rings, setRings] = useState<Ring[]>([]);
  useEffect(() => {
    if (!highlight) {
      setRings([]);
      return;
    }
    let frame = 0;
    const measure = () => {
      frame = 0;
      const next = highlight.flatMap((h, i) => boxesOf(h, i));
      setRings((prev) => (sameRings(prev, next) ? prev : next));
    };
    const soon = () => {
      frame ||= requestAnimationFrame(measure);
    };
    measure();
    const timer = setInterval(soon, 300);
    window.addEventListener('resize', soon);
    window.addEventListener('scroll', soon, { passive: true });
    return () => {
      clearInterval(timer);
      cancelAnimationFrame(frame);
      window.removeEventListener('resize', soon);
      window.removeEventListener('scroll', soon);
    };
  }, [highlight]);
  return rings;
}

function Spotlight({ rings }: { rings: Ring[] }) {
  // The layer spans the page's width inside its vertical scroll bar (clientWidth): scrollWidth counted the
  // scroll bar's 15 px too, and the layer, as wide as that, then kept a horizontal scroll bar of its own.
  const width = document.documentElement.clientWidth;
  const height = document.documentElement.scrollHeight;
  return createPortal(
    <div className="tour-layer" data-testid="tour-rings" style={{ width, height }} aria-hidden="true">
      <svg width={width} height={height}>
        <defs>
          <mask id="tour-holes">
            <rect width={width} height={height} fill="white" />
            {rings.map((r, i) => (
              <rect key={i} x={r.x} y={r.y} width={r.w} height={r.h} rx={6} fill="black" />
            ))}
          </mask>
        </defs>
        <rect width={width} height={height} fill="rgba(4, 7, 10, 0.5)" mask="url(#tour-holes)" />
      </svg>
      {rings.map((r, i) => (
        <div key={i} className="tour-ring" data-tour-ring={r.index} style={{ left: r.x, top: r.y, width: r.w, height: r.h }}>
          {r.label && <span>{r.label}</span>}
        </div>
      ))}
    </div>,
    document.body,
  );
}

/** Scrolls so that the first highlighted element stands in the window above the tour bar. */
function bringIntoView(highlight: readonly TourHighlight[], barHeight: number): void {
  for (const h of highlight) {
    const el = typeof h === 'string' ? document.querySelector(h) : document.querySelector('[data-testid="staircase-canvas"]');
    if (!el) continue;
    const r = el.getBoundingClientRect();
    const room = window.innerHeight - barHeight - 24;
    if (r.top >= 8 && r.bottom <= room) return;
    const top = r.height < room - 32 ? r.top - (room - r.height) / 2 : r.top - 16;
    const smooth = !window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    window.scrollTo({ top: window.scrollY + top, behavior: smooth ? 'smooth' : 'auto' });
    return;
  }
}

export function Tour() {
  const step = useWorkbench((s) => s.tourStep);
  const applied = useWorkbench((s) => s.tourApplied);
  const busy = useWorkbench((s) => s.tourBusy);
  const blocked = useWorkbench((s) => s.tourBlocked);
  const error = useWorkbench((s) => s.tourError);
  const hasView = useWorkbench((s) => s.view !== null);
  const tourGo = useWorkbench((s) => s.tourGo);
  const next = useWorkbench((s) => s.tourNext);
  const back = useWorkbench((s) => s.tourBack);
  const end = useWorkbench((s) => s.endTour);
  const play = useWorkbench((s) => s.trainPlay);
  const scoring = useWorkbench((s) => s.scoring !== null || s.modelLoading !== null);
  const barRef = useRef<HTMLDivElement>(null);
  const def = step !== null ? TOUR_STEPS[step - 1] : null;
  // The step's readout, once per view and scores (not in a selector, which would run it on every store update).
  const view = useWorkbench((s) => s.view);
  const drift = useWorkbench((s) => (s.driftView === s.view ? s.drift : null));
  const readout = useMemo(() => (def?.readout && view ? def.readout(view, drift) : null), [def, view, drift]);
  const rings = useRings(def && !busy && !blocked ? def.highlight : null);

  // A step named by the URL is applied once the page shows a rollout.
  useEffect(() => {
    if (hasView && step !== null && applied !== step) void tourGo(step);
  }, [hasView, step, applied, tourGo]);

  // Room under the page for the bar, so that nothing it covers is out of reach.
  useLayoutEffect(() => {
    if (step === null) return;
    const bar = barRef.current;
    const fit = () => (document.body.style.paddingBottom = `${(bar?.offsetHeight ?? 0) + 16}px`);
    fit();
    const observer = new ResizeObserver(fit);
    if (bar) observer.observe(bar);
    return () => {
      observer.disconnect();
      document.body.style.paddingBottom = '';
    };
  }, [step]);

  // Once set up: open what the step needs opened, then bring its first highlight into sight.
  useEffect(() => {
    if (!def || busy || blocked || !hasView || applied !== step) return;
    for (const selector of def.setup.expand ?? []) {
      const button = document.querySelector<HTMLElement>(selector);
      if (button?.getAttribute('aria-expanded') === 'false') button.click();
    }
    const id = requestAnimationFrame(() => bringIntoView(def.highlight, barRef.current?.offsetHeight ?? 0));
    return () => cancelAnimationFrame(id);
  }, [def, busy, blocked, hasView, applied, step]);

  useEffect(() => {
    if (step === null) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      if (e.key === 'ArrowRight') next();
      else if (e.key === 'ArrowLeft') back();
      else if (e.key === 'Escape') end();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [step, next, back, end]);

  if (step === null || !def) return null;
  const last = step === TOUR_STEPS.length;
  const status = busy ? 'Setting up the views…' : (readout ?? (def.setup.model && scoring ? 'Scoring on WebGPU…' : null));
  const before = step - 1;
  return (
    <>
      <Spotlight rings={rings} />
      <div
        className="tour-bar"
        ref={barRef}
        role="dialog"
        aria-label={`Guided tour, step ${step} of ${TOUR_STEPS.length}`}
        data-testid="tour"
        data-step={step}
        data-busy={busy || undefined}
      >
        <nav className="tour-progress" aria-label="Tour steps">
          {TOUR_STEPS.map((s, i) => (
            <a
              key={i}
              href={`?tour=${i + 1}`}
              className={i + 1 === step ? 'current' : i + 1 < step ? 'done' : undefined}
              title={`${i + 1}. ${s.title}${s.needs ? ' (needs WebGPU)' : ''}`}
              aria-current={i + 1 === step ? 'step' : undefined}
              onClick={(e) => {
                e.preventDefault();
                void tourGo(i + 1);
              }}
            >
              {i + 1}
            </a>
          ))}
        </nav>
        <div className="tour-text">
          <h2 data-testid="tour-title">
            <span className="muted">
              {step} / {TOUR_STEPS.length}
            </span>{' '}
            {def.title}
          </h2>
          <p className={blocked ? 'tour-caption dim' : 'tour-caption'} data-testid="tour-caption">
            <MarkdownLine text={def.caption} />
          </p>
          {blocked && (
            <p className="tour-blocked" role="alert" data-testid="tour-blocked">
              This step runs on WebGPU, and this browser offers none: {blocked} Steps 1–{before} need no GPU; to go on, open this page in a browser with WebGPU
              (a recent Chrome or Edge, for example).
            </p>
          )}
          {error && (
            <p className="tour-blocked" role="alert" data-testid="tour-error">
              This step could not be set up: {error}
            </p>
          )}
          {!blocked && !error && status && (
            <p className="tour-readout" data-testid="tour-readout">
              {status}
            </p>
          )}
        </div>
        <div className="tour-buttons">
          {def.action && !blocked && (
            <button type="button" className="button" onClick={play} disabled={busy} data-testid="tour-action">
              {def.action.label}
            </button>
          )}
          <button type="button" className="button" onClick={back} disabled={step === 1} data-testid="tour-back" aria-label="Back (←)">
            ← Back
          </button>
          {last ? (
            <button type="button" className="button primary" onClick={end} data-testid="tour-done">
              Done
            </button>
          ) : (
            <button type="button" className="button primary" onClick={next} disabled={!!blocked} data-testid="tour-next" aria-label="Next (→)">
              Next →
            </button>
          )}
          <button type="button" className="dismiss" onClick={end} aria-label="Leave the tour (Escape)" data-testid="tour-close">
            ×
          </button>
        </div>
      </div>
    </>
  );
}
