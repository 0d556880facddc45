// The workbench page: top bar, load bar, then the rollout views (the playground when open, summary,
// staircase, conditioning tree, target inspector). On start the URL, else the last set kept in IndexedDB, else the worked
// example opens, so the page is never empty; the URL follows the view from then on.
import { useEffect } from 'react';
import { TopBar } from './TopBar';
import { useWorkbench } from './store';
import { STAGED_PANELS } from './store/rolloutSlice';
import { DropOverlay } from './views/load/DropOverlay';
import { LoadBar } from './views/load/LoadBar';
import { bootstrap, startUrlSync } from './store/urlSync';
import { Inspector } from './views/inspector/Inspector';
import { StaircaseView } from './views/staircase/StaircaseView';
import { ContextPanel } from './views/context/ContextPanel';
import { DriftPanel } from './views/drift/DriftPanel';
import { SummaryPanel } from './views/SummaryPanel';
import { ImportReport } from './views/ImportReport';
import { DatasetTable } from './views/dataset/DatasetTable';
import { TreeView } from './views/tree/TreeView';
import { TrainPanel } from './train/TrainPanel';
import { MaskView } from './views/mask/MaskView';
import { Tour } from './tour/Tour';
import { TourOffer } from './tour/TourOffer';
import { GlossaryPanel } from './glossary/GlossaryPanel';
import { PlaygroundPanel } from './views/playground/PlaygroundPanel';
import { Staged } from './views/common/Staged';

function isTyping(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName));
}

export function App() {
  const probeGpu = useWorkbench((s) => s.probeGpu);
  const hasView = useWorkbench((s) => s.view !== null);
  const stepTarget = useWorkbench((s) => s.stepTarget);
  const view = useWorkbench((s) => s.view);
  const model = useWorkbench((s) => s.model);
  const scoreView = useWorkbench((s) => s.scoreView);

  // With a model loaded, every rollout shown is scored (in the scoring worker).
  useEffect(() => {
    if (view && model) void scoreView();
  }, [view, model, scoreView]);

  useEffect(() => {
    void probeGpu();
  }, [probeGpu]);

  // The checkpoint the drift panel scored with last time (IndexedDB) is loaded again.
  const restoreCheckpoint = useWorkbench((s) => s.restoreCheckpoint);
  useEffect(() => {
    void restoreCheckpoint();
  }, [restoreCheckpoint]);

  useEffect(() => {
    let stop: (() => void) | null = null;
    let cancelled = false;
    void bootstrap(useWorkbench, window.location.search).then(() => {
      if (!cancelled) stop = startUrlSync(useWorkbench);
    });
    return () => {
      cancelled = true;
      stop?.();
    };
  }, []);

  // Keyboard: arrows move through targets (in id order), Home/End jump to the first/last.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.altKey || e.ctrlKey || e.metaKey || isTyping(e.target)) return;
      const s = useWorkbench.getState();
      if (s.tourStep !== null) return; // the tour's own keys: ←/→ move through its steps
      const targets = s.view?.rollout.targets;
      if (!targets?.length) return;
      let handled = true;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') stepTarget(1);
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') stepTarget(-1);
      else if (e.key === 'Home') s.selectTarget(targets[0]);
      else if (e.key === 'End') s.selectTarget(targets[targets.length - 1]);
      else handled = false;
      if (handled) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [stepTarget]);

  return (
    <div className="app">
      <TopBar />
      <TourOffer />
      <LoadBar />
      <TrainPanel />
      <main className="workspace">
        {hasView ? (
          <>
            <div className="views">
              <PlaygroundPanel />
              <SummaryPanel />
              <ImportReport />
              <DatasetTable />
              <DriftPanel />
              <StaircaseView />
              {/* The panels whose DOM grows with the tree take a large view one per task (store: viewStage). */}
              <ContextPanel />
              <Staged rank={STAGED_PANELS.indexOf('tree')}>
                <TreeView />
              </Staged>
              <MaskView />
            </div>
            <aside className="side">
              <Inspector />
            </aside>
          </>
        ) : (
          <p className="muted pad">Opening a rollout…</p>
        )}
      </main>
      <DropOverlay />
      <Tour />
      <GlossaryPanel />
    </div>
  );
}
