// Marks on Chromium's performance timeline for the benchmark (bench/views.ts): one mark when a
// view first draws a newly loaded rollout, and a measure per frame while `__MW_PERF__` is set.

declare global {
  interface Window {
    __MW_PERF__?: boolean;
  }
}

export function markDrawn(view: 'staircase' | 'tree'): void {
  performance.mark(`mw:${view}-drawn`);
}

export function measureFrame(view: 'staircase' | 'tree' | 'context', start: number): void {
  if (typeof window !== 'undefined' && window.__MW_PERF__) performance.measure(`mw:${view}-frame`, { start, end: performance.now() });
}
