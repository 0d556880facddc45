// Live training: the run configuration, the controls, one chart per metric with a line per method,
// the lanes' latest figures and the episode being played. The engine runs in a worker; this panel
// only mirrors it through the store. It starts collapsed to one line (the inspection views come
// first), opens when asked (remembered in localStorage) or when the link names a run, and starts
// the training worker only once open.
import { useEffect, useState } from 'react';
import { useWorkbench } from '../store';
import { CHARTS } from './charts/specs';
import { MetricChart } from './charts/MetricChart';
import { ConfigForm } from './ConfigForm';
import { Controls } from './Controls';
import { Lanes } from './Lanes';
import { LivePanel } from './LivePanel';
import { parseRunFragment, serializeRunFragment } from './urlSchema';
import './train.css';

/** The draft config from the URL fragment on start; the fragment follows the config afterwards. */
function useRunUrl(): void {
  useEffect(() => {
    const fromUrl = parseRunFragment(window.location.hash);
    if (fromUrl) useWorkbench.getState().setTrainConfig(fromUrl);
    let last = '';
    const write = () => {
      const fragment = serializeRunFragment(useWorkbench.getState().trainConfig);
      if (fragment === last) return;
      last = fragment;
      if (fragment !== window.location.hash)
        window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}${fragment}`);
    };
    write();
    return useWorkbench.subscribe((s, prev) => {
      if (s.trainConfig !== prev.trainConfig) write();
    });
  }, []);
}

const OPEN_KEY = 'mw.train.open';

/** As the person left it; never set, open only when the URL fragment carries a run configuration (a shared run). */
function initiallyOpen(): boolean {
  let stored: string | null = null;
  try {
    stored = window.localStorage.getItem(OPEN_KEY);
  } catch {
    // no storage (private mode): the default
  }
  return stored === null ? parseRunFragment(window.location.hash) !== null : stored === '1';
}

function remember(open: boolean): void {
  try {
    window.localStorage.setItem(OPEN_KEY, open ? '1' : '0');
  } catch {
    // not remembered
  }
}

function Banner() {
  const banner = useWorkbench((s) => s.trainBanner);
  const dismiss = useWorkbench((s) => s.dismissTrainBanner);
  if (!banner) return null;
  return (
    <div className={`train-banner ${banner.kind}`} role="alert" data-testid="train-banner" data-kind={banner.kind}>
      <span>{banner.message}</span>
      <button type="button" className="small" onClick={dismiss} aria-label="Dismiss">
        ✕
      </button>
    </div>
  );
}

function Reason() {
  const status = useWorkbench((s) => s.trainStatus);
  if (!status.reason || status.phase === 'recovering') return null;
  const title =
    status.cause === 'non-finite'
      ? 'Paused: a non-finite step. The update was not applied; weights and optimizer state are as before it.'
      : status.cause === 'refused'
        ? 'This configuration cannot run:'
        : status.cause === 'no-webgpu'
          ? 'Training cannot run here:'
          : status.cause === 'device'
            ? 'Device:'
            : status.cause === 'busy'
              ? 'Training runs elsewhere:'
              : status.cause === 'not-restored'
                ? 'The stored run was not resumed (start a new run to replace it):'
                : 'Paused:';
  return (
    <div className={`train-reason ${status.cause ?? ''}`} data-testid="train-reason" data-cause={status.cause}>
      <strong>{title}</strong> <span>{status.reason}</span>
      {status.cause === 'no-webgpu' && <span className="muted"> The inspection views below work without WebGPU.</span>}
    </div>
  );
}

export function TrainPanel() {
  const [open, setOpen] = useState(initiallyOpen);
  const running = useWorkbench((s) => s.trainStatus.phase === 'running');
  const toggle = () => {
    remember(!open);
    setOpen(!open);
  };
  if (!open) {
    return (
      <section className="panel train-panel collapsed" aria-label="Live training" data-testid="train-panel" data-open="false">
        <header className="panel-head">
          <button type="button" className="disclosure" aria-expanded={false} onClick={toggle} data-testid="train-panel-toggle">
            ▸ Live training
          </button>
          <span className="hint">
            Train a small GPT-2 in this tab on WebGPU under several replay methods side by side, and watch their losses and drift.
            {running ? ' Training is running.' : ''}
          </span>
        </header>
      </section>
    );
  }
  return <OpenTrainPanel onCollapse={toggle} />;
}

function OpenTrainPanel({ onCollapse }: { onCollapse(): void }) {
  const connect = useWorkbench((s) => s.trainConnect);
  const gpu = useWorkbench((s) => s.trainGpu);
  const methods = useWorkbench((s) => s.trainRun?.config.methods ?? s.trainConfig.methods);
  const objective = useWorkbench((s) => s.trainRun?.config.objective ?? s.trainConfig.objective);
  useRunUrl();
  useEffect(() => {
    connect();
  }, [connect]);
  const charts = CHARTS.filter((c) => (!c.only || c.only.some((m) => methods.includes(m))) && (!c.objectives || c.objectives.includes(objective)));

  return (
    <section className="panel train-panel" aria-label="Live training" data-testid="train-panel" data-open="true">
      <header className="panel-head">
        <button
          type="button"
          className="disclosure"
          aria-expanded
          onClick={onCollapse}
          data-testid="train-panel-toggle"
          title="Collapse the training panel (a run keeps going)"
        >
          ▾ Live training
        </button>
        <span className="hint">
          {gpu.kind === 'ready'
            ? `engine in a worker on ${gpu.adapter}`
            : gpu.kind === 'probing'
              ? 'starting the engine: a worker makes its WebGPU device…'
              : 'no WebGPU'}
          {' · space: play/pause · .: step'}
        </span>
      </header>
      <Controls />
      <Banner />
      <Reason />
      <div className="train-body">
        <ConfigForm />
        <div className="train-main">
          <Lanes />
          <div className="train-charts">
            {charts.map((spec) => (
              <MetricChart key={spec.id} spec={spec} />
            ))}
          </div>
          <LivePanel />
        </div>
      </div>
    </section>
  );
}
