// A panel whose DOM grows with the tree, taking a large view in a task of its own (the store's viewStage): until its turn
// it is an empty frame of the height it last had, so the page below it does not jump and the panels
// before it are committed without it. A small view reaches every panel in the one store update.
import { useEffect, useRef, type ReactNode } from 'react';
import { useWorkbench } from '../../store';

export function Staged({ rank, children }: { rank: number; children: ReactNode }) {
  const ready = useWorkbench((s) => s.viewStage > rank);
  const ref = useRef<HTMLDivElement>(null);
  /** The frame's last height, kept by a ResizeObserver (read without forcing a layout). */
  const height = useRef(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver((entries) => {
      for (const entry of entries) if (ready) height.current = entry.borderBoxSize[0]?.blockSize ?? height.current;
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [ready]);
  return (
    <div ref={ref} className="staged" aria-busy={!ready || undefined} style={ready ? undefined : { height: height.current }}>
      {ready ? children : null}
    </div>
  );
}
