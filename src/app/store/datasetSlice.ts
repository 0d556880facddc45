// Data-set slice: the table of the open JSONL set (one row of figures per rollout, derived in the
// rollout worker so 10k rollouts never block the page) and, with a checkpoint, one drift row per
// rollout (logdiff, μ per method, KL_SDCC), scored one rollout at a time in the scoring worker: the
// rollout shown by the views is never kept waiting behind more than one rollout of the table.
import { rolloutWorker, scoringWorker } from './clients';
import type { DatasetSlice, Slice } from './types';

/** Bumped by every new table: an older table's rows are dropped when they arrive. */
let tables = 0;
/** Bumped by every new table, scoring run and stop: an older scoring loop ends at its next rollout. */
let scorings = 0;

export const createDatasetSlice: Slice<DatasetSlice> = (set, get) => ({
  table: null,
  tableProgress: null,
  tableError: null,
  tableDrift: null,
  tableScoring: null,

  async loadTable() {
    const mine = ++tables;
    scorings++;
    const { setJob, rollouts } = get();
    set({ table: null, tableProgress: null, tableError: null, tableScoring: null });
    if (setJob === null || rollouts.length < 2) return;
    set({ tableProgress: { done: 0, total: rollouts.length } });
    try {
      const rows = await rolloutWorker().table(setJob, (done, total) => {
        if (mine === tables) set({ tableProgress: { done, total } });
      });
      if (mine !== tables || get().setJob !== setJob) return;
      set({ table: { set: setJob, rows }, tableProgress: null });
    } catch (error) {
      if (mine === tables) set({ tableProgress: null, tableError: error instanceof Error ? error.message : String(error) });
    }
  },

  async scoreTable() {
    const { table, model } = get();
    if (!table || !model || get().tableScoring) return;
    const mine = ++scorings;
    // One Map per table and model, filled in place (a copy per rollout would be quadratic); `version` tells the view.
    const kept = get().tableDrift;
    const drift = kept && kept.set === table.set && kept.modelKey === model.key ? kept : { set: table.set, modelKey: model.key, rows: new Map(), version: 0 };
    const todo = table.rows.map((_, i) => i).filter((i) => !drift.rows.has(i));
    let done = table.rows.length - todo.length;
    set({ tableDrift: { ...drift }, tableScoring: { done, total: table.rows.length } });
    for (const index of todo) {
      if (mine !== scorings || get().model?.key !== model.key || get().table !== table) break;
      let row;
      try {
        row = await scoringWorker().summarize(await rolloutWorker().rollout(table.set, index));
      } catch (error) {
        row = { error: error instanceof Error ? error.message : String(error) };
      }
      const current = get().tableDrift;
      if (!current || current.rows !== drift.rows) break;
      current.rows.set(index, row);
      set({ tableDrift: { ...current, version: current.version + 1 } });
      if (mine !== scorings) break; // stopped while this rollout was scored: kept, and no more
      set({ tableScoring: { done: ++done, total: table.rows.length } });
    }
    if (mine === scorings) set({ tableScoring: null });
  },

  stopTableScoring() {
    scorings++;
    set({ tableScoring: null });
  },

  recordRowDrift(index, row) {
    const { table, model, tableDrift } = get();
    if (!table || !model) return;
    const same = tableDrift && tableDrift.set === table.set && tableDrift.modelKey === model.key;
    const drift = same ? tableDrift : { set: table.set, modelKey: model.key, rows: new Map(), version: 0 };
    drift.rows.set(index, row);
    set({ tableDrift: { ...drift, version: drift.version + 1 } });
  },
});
