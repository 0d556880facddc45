// Drift colouring of target cells, shared by the staircase and the tree: when targets are coloured
// by drift and the shown rollout is scored, a target's colour is ℓ_m − ℓ_live for the selected
// method (SDCC's student is the compressed walk, so SDCC shows Naive-Compressed's difference).
import { useMemo } from 'react';
import { useWorkbench } from '../../store';
import type { ColorMode } from '../../url/schema';
import type { ScoredMethod } from '../../protocol/score';
import { driftColor } from './colors';

export function useTargetColor(): ((id: number) => string | null) | null {
  const colorBy = useWorkbench((s) => s.colorBy);
  const drift = useWorkbench((s) => s.drift);
  const view = useWorkbench((s) => s.view);
  const driftView = useWorkbench((s) => s.driftView);
  const method = useWorkbench((s) => s.method);
  return useMemo(() => {
    if (colorBy !== 'drift' || !drift || driftView !== view) return null;
    const scored: ScoredMethod = method === 'sdcc' ? 'naive-compressed' : method;
    const m = drift.methods.find((d) => d.method === scored);
    if (!m || m.error) return null;
    const color = driftColor(drift.range);
    return (id: number) => {
      const d = m.delta.get(id);
      return d === undefined ? null : color(d);
    };
  }, [colorBy, drift, driftView, view, method]);
}

export function ColorToggle({ colorBy, setColorBy }: { colorBy: ColorMode; setColorBy: (c: ColorMode) => void }) {
  const scored = useWorkbench((s) => s.drift !== null && s.driftView === s.view);
  if (!scored) return null;
  return (
    <div className="segmented" role="group" aria-label="Target colour">
      <button type="button" aria-pressed={colorBy === 'state'} onClick={() => setColorBy('state')} data-testid="color-state">
        targets: state
      </button>
      <button
        type="button"
        aria-pressed={colorBy === 'drift'}
        onClick={() => setColorBy('drift')}
        data-testid="color-drift"
        title="ℓ_method − ℓ_live, for the method picked in the inspector"
      >
        targets: drift
      </button>
    </div>
  );
}
