// The workbench page: top bar, then the rollout views and the training area.
import { useEffect } from 'react';
import { TopBar } from './TopBar';
import { useWorkbench } from './store';

export function App() {
  const probeGpu = useWorkbench((s) => s.probeGpu);
  useEffect(() => {
    void probeGpu();
  }, [probeGpu]);
  return (
    <div className="app">
      <TopBar />
      <main className="workspace" />
    </div>
  );
}
