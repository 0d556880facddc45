// The top bar: product name and the WebGPU adapter in use (or why there is none).
import { useWorkbench } from './store';
import { TeachButtons } from './tour/TourOffer';
import { PlaygroundButton } from './views/playground/PlaygroundPanel';

export function TopBar() {
  const gpu = useWorkbench((s) => s.gpu);
  return (
    <header className="topbar">
      <div className="brand">
        <svg viewBox="0 0 32 32" width="22" height="22" aria-hidden="true">
          <path d="M6 26V6h5v5h5v5h5v5h5v5z" fill="#5ec4b6" />
          <circle cx="21" cy="9" r="3" fill="#f2a541" />
        </svg>
        <span>MemoryWalker Workbench</span>
      </div>
      <TeachButtons />
      <PlaygroundButton />
      <div className="adapter" data-testid="gpu-adapter" data-status={gpu.kind}>
        {gpu.kind === 'probing' && <span>Looking for WebGPU…</span>}
        {gpu.kind === 'ready' && (
          <span title={gpu.adapter.description}>
            WebGPU: <strong>{gpu.line}</strong>
            {gpu.adapter.isSoftware && <em className="muted"> (CPU driver: times are not GPU times)</em>}
          </span>
        )}
        {gpu.kind === 'unavailable' && (
          <span className="warn" role="status">
            No WebGPU: {gpu.message} Inspection works; training needs WebGPU.
          </span>
        )}
      </div>
    </header>
  );
}
