// Work that waits for the page to be idle (after the frames that show a change), within a bound.

/**
 * Runs `task` when the page is next idle, within `timeoutMs`; soon where there is no idle callback
 * (Node, older engines). Returns a function that cancels it if it has not run yet.
 */
export function whenIdle(task: () => void, timeoutMs: number): () => void {
  if (typeof requestIdleCallback === 'function') {
    const handle = requestIdleCallback(task, { timeout: timeoutMs });
    return () => cancelIdleCallback(handle);
  }
  const timer = setTimeout(task, 0);
  return () => clearTimeout(timer);
}
