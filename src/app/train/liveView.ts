// The episode being played, shown in the inspection views (staircase, tree, inspector) through
// their own loading action: the partial rollout is a valid SPEC §2 rollout at every point, so it
// opens like a file. One open at a time, at most one per MIN_INTERVAL_MS (each one re-renders the
// views on the main thread); while one is in flight or waiting only the newest state is kept.
import type { EventJson, RolloutJson } from '../../rollout/format';
import { ROLLOUT_FORMAT } from '../../rollout/format';
import type { WorkbenchState } from '../store';

interface Pending {
  id: string;
  events: readonly EventJson[];
}

const MIN_INTERVAL_MS = 1000;
let inFlight = false;
let lastOpen = -Infinity;
let pending: Pending | null = null;

export function liveRolloutJson(id: string, events: readonly EventJson[]): RolloutJson {
  return { format: ROLLOUT_FORMAT, id, vocab: 272, tokenizer: 'byte', meta: { live: true }, events: events as EventJson[] };
}

/** Opens the partial rollout in the views (kept as the last opened set, so a reload shows it again). */
export function showLiveRollout(get: () => WorkbenchState, id: string, events: readonly EventJson[]): void {
  pending = { id, events };
  if (!inFlight) void drain(get);
}

async function drain(get: () => WorkbenchState): Promise<void> {
  inFlight = true;
  try {
    while (pending) {
      const wait = lastOpen + MIN_INTERVAL_MS - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      if (!pending) break;
      const { id, events } = pending;
      pending = null;
      if (!events.some((e) => e.op === 'append' && e.role === 'act')) continue; // nothing to inspect yet
      const state = get();
      const blob = new Blob([JSON.stringify(liveRolloutJson(id, events))], { type: 'application/json' });
      const keep = state.view?.rollout.id === id ? state.selectedTarget : null;
      lastOpen = performance.now();
      await state.openBlob(blob, { kind: 'file', name: `${id}.json` }, { auto: true, target: keep });
    }
  } finally {
    inFlight = false;
  }
}
