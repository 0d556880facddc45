// The run controller's live view: the episode being played goes to the page at most once per live
// interval, always its newest state (a finished episode's events as they are, a growing one's copied).

import type { ControllerState, LiveEvent } from './controller-state';

const now = () => performance.now();

function sendLive(run: ControllerState): void {
  const live = run.live;
  live.timer = null;
  if (!live.unsent) return;
  const event = live.unsent.done ? live.unsent : { ...live.unsent, events: live.unsent.events.slice() };
  live.unsent = null;
  live.lastPost = now();
  run.deps.emit(event);
}

/** Sends `event` now, or as the newest state once the live interval has passed since the last one. */
export function postLive(run: ControllerState, event: LiveEvent): void {
  run.live.unsent = event;
  const wait = run.live.lastPost + run.liveInterval - now();
  if (wait <= 0) sendLive(run);
  else run.live.timer ??= setTimeout(() => sendLive(run), wait);
}

/** Drops the update not sent yet (the run ended). */
export function clearLive(run: ControllerState): void {
  if (run.live.timer !== null) clearTimeout(run.live.timer);
  run.live.timer = null;
  run.live.unsent = null;
}
