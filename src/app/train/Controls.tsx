// Play, pause, single step and reset, with the run's status, the step counter and a progress bar
// (steps, tokens/s, ETA for fixed-length runs). Space plays or pauses, `.` steps once.
import { useEffect, useMemo, useState } from 'react';
import { useWorkbench } from '../store';
import type { RunPhase } from '../protocol/train';
import { duration } from '../../present/progress';

const PHASE_TEXT: Record<RunPhase, string> = {
  idle: 'ready',
  preparing: 'preparing…',
  running: 'running',
  pausing: 'pausing…',
  paused: 'paused',
  done: 'done',
  recovering: 'recovering…',
  refused: 'refused',
  unavailable: 'unavailable',
};

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName));
}

/** The time left, or a dash while it is not measured yet. */
function eta(seconds: number | null): string {
  return seconds === null || !Number.isFinite(seconds) ? '—' : duration(seconds);
}

/**
 * The status pill: the run's phase, except that an idle panel whose engine has not answered yet
 * (the worker starting, its WebGPU device being made) says so rather than "ready".
 */
export function phaseText(phase: RunPhase, engine: 'probing' | 'ready' | 'unavailable'): { text: string; kind: RunPhase } {
  if (phase === 'idle' && engine === 'probing') return { text: 'starting…', kind: 'preparing' };
  return { text: PHASE_TEXT[phase], kind: phase };
}

/**
 * The ETA shown between progress reports: the last report's, counted down by the time since it came
 * while the run plays (a long step, an evaluation, sends none), never below zero.
 */
export function etaNow(etaSec: number | null, sinceReportSec: number, playing: boolean): number | null {
  if (etaSec === null) return null;
  return playing ? Math.max(0, etaSec - sinceReportSec) : etaSec;
}

/** What Reset asks before it ends a run that has made progress (null: nothing to lose, no question). */
export function resetQuestion(hasRun: boolean, step: number, totalSteps: number): string | null {
  if (!hasRun || step === 0) return null;
  const at = totalSteps > 0 ? `step ${step} of ${totalSteps}` : `step ${step}`;
  return `End this run at ${at} and forget it? Its charts and stored checkpoints are deleted.`;
}

export function Controls() {
  const status = useWorkbench((s) => s.trainStatus);
  const hasRun = useWorkbench((s) => s.trainRun !== null);
  const progress = useWorkbench((s) => s.trainProgress);
  const totalSteps = useWorkbench((s) => s.trainRun?.config.steps ?? s.trainConfig.steps);
  const checkpointStep = useWorkbench((s) => s.trainCheckpointStep);
  const play = useWorkbench((s) => s.trainPlay);
  const pause = useWorkbench((s) => s.trainPause);
  const stepOnce = useWorkbench((s) => s.trainStepOnce);
  const reset = useWorkbench((s) => s.trainReset);
  const engine = useWorkbench((s) => s.trainGpu.kind);

  const phase = status.phase;
  const busy = phase === 'preparing' || phase === 'recovering';
  const running = phase === 'running' || phase === 'pausing';
  const blocked = phase === 'unavailable';
  const step = progress?.step ?? 0;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      const s = useWorkbench.getState();
      const p = s.trainStatus.phase;
      if (e.key === ' ') {
        if ((e.target as HTMLElement | null)?.tagName === 'BUTTON') return; // the button's own click
        e.preventDefault();
        if (p === 'running') s.trainPause();
        else if (p !== 'pausing' && p !== 'preparing' && p !== 'recovering' && p !== 'unavailable' && p !== 'done') s.trainPlay();
      } else if (e.key === '.') {
        if (p === 'paused' || p === 'idle' || p === 'refused') {
          e.preventDefault();
          s.trainStepOnce();
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  // The ETA counts down between reports (an evaluation step sends none for a while).
  const reportedAt = useMemo(() => performance.now(), [progress]);
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => setNow(performance.now()), 1000);
    return () => clearInterval(timer);
  }, [running]);
  const etaSec = etaNow(progress?.etaSec ?? null, Math.max(0, now - reportedAt) / 1000, running);
  const pill = phaseText(phase, engine);
  const askReset = () => {
    const question = resetQuestion(hasRun, step, totalSteps);
    if (question === null || window.confirm(question)) reset();
  };

  const fraction = totalSteps > 0 ? Math.min(1, step / totalSteps) : 0;
  return (
    <div className="train-controls">
      <div className="buttons">
        <button
          type="button"
          className="button primary"
          data-testid="train-start"
          onClick={play}
          disabled={blocked || busy || running || phase === 'done'}
          title="Play (space)"
        >
          ▶ {hasRun ? 'Resume' : 'Start'}
        </button>
        <button type="button" className="button" data-testid="train-pause" onClick={pause} disabled={!running} title="Pause (space)">
          ❚❚ Pause
        </button>
        <button
          type="button"
          className="button"
          data-testid="train-step"
          onClick={stepOnce}
          disabled={blocked || busy || running || phase === 'done'}
          title="One step (.)"
        >
          Step +1
        </button>
        <button
          type="button"
          className="button"
          data-testid="train-reset"
          onClick={askReset}
          disabled={busy || (!hasRun && phase !== 'refused')}
          title="End the run and forget it (asks first once it has made steps)"
        >
          ↺ Reset
        </button>
      </div>
      <span className={`status-pill ${pill.kind}`} data-testid="train-status" data-phase={phase} role="status">
        {pill.text}
      </span>
      <div className="progress-block" aria-label="Progress">
        <div className="counts">
          <span>
            step <strong data-testid="train-step-count">{step}</strong>
            {totalSteps > 0 && <span className="muted"> / {totalSteps}</span>}
          </span>
          <span className="muted" data-testid="train-rate">
            {progress && progress.stepsPerSec > 0
              ? `${progress.stepsPerSec.toFixed(2)} steps/s · ${Math.round(progress.tokensPerSec).toLocaleString()} tok/s`
              : '— steps/s'}
          </span>
          <span className="muted">ETA {totalSteps > 0 ? eta(etaSec) : 'open-ended'}</span>
          <span className="muted" data-testid="train-checkpoint">
            {checkpointStep > 0 ? `checkpoint @ ${checkpointStep}` : 'no checkpoint yet'}
          </span>
        </div>
        <div className="bar" role="progressbar" aria-valuemin={0} aria-valuemax={totalSteps || undefined} aria-valuenow={step}>
          <div style={{ width: `${(totalSteps > 0 ? fraction : running ? 1 : 0) * 100}%` }} className={totalSteps > 0 ? '' : 'indeterminate'} />
        </div>
      </div>
    </div>
  );
}
