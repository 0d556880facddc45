// The metric history of a run on the page: records per method in step order, appended in place as
// they arrive (the store holds the one object and a version number, so a step costs no copy and
// charts redraw from a subscription). Also the JSONL and CSV exports.

import { csvFormatRows } from 'd3';
import { neutralise } from '../export/targetRows';
import { MISMATCH_NAMES } from '../../metrics/mismatch';
import type { Method } from '../../plan/types';
import type { MetricRecord } from '../../run/engine';

export interface MetricHistory {
  byMethod: Map<Method, MetricRecord[]>;
}

export function createHistory(records: readonly MetricRecord[] = []): MetricHistory {
  const history: MetricHistory = { byMethod: new Map() };
  appendRecords(history, records);
  return history;
}

export function appendRecords(history: MetricHistory, records: readonly MetricRecord[]): void {
  for (const r of records) {
    let lane = history.byMethod.get(r.method);
    if (!lane) history.byMethod.set(r.method, (lane = []));
    // A lane retried after a failed step, or a run restored from its checkpoint: the newer record wins.
    while (lane.length && lane[lane.length - 1].step >= r.step) lane.pop();
    lane.push(r);
  }
}

/** Columns of the CSV export, in order. */
export const CSV_COLUMNS: readonly (keyof MetricRecord)[] = [
  'step',
  'method',
  'objective',
  'loss',
  'taskLoss',
  'logdiff',
  'mu',
  'conditioningDrift',
  'conditioningMu',
  'klSdcc',
  'klFired',
  'divergingLeaves',
  'targets',
  'tokens',
  'nPacked',
  'nFinal',
  'K',
  'reward',
  'em',
  'evalReward',
  'evalEm',
  'skipped',
  'lr',
  'gradNorm',
  'stepMs',
  'genMs',
  'time',
];

function lanesInOrder(history: MetricHistory): MetricRecord[] {
  return [...history.byMethod.values()].flat().sort((a, b) => a.step - b.step || a.method.localeCompare(b.method));
}

export function historyJsonl(history: MetricHistory): string {
  return (
    lanesInOrder(history)
      .map((r) => JSON.stringify(r))
      .join('\n') + '\n'
  );
}

/** verl's mismatch figures follow, one column each, named as verl logs them (`rollout_corr/kl`, ...). */
export const CSV_MISMATCH_COLUMNS = MISMATCH_NAMES.map((name) => `rollout_corr/${name}`);

export function historyCsv(history: MetricHistory): string {
  const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? '1' : '0') : neutralise(String(v)));
  const row = (r: MetricRecord) => [...CSV_COLUMNS.map((c) => cell(r[c])), ...MISMATCH_NAMES.map((name) => cell(r.rollout_corr?.[name]))];
  return csvFormatRows([[...CSV_COLUMNS, ...CSV_MISMATCH_COLUMNS], ...lanesInOrder(history).map(row)]) + '\n';
}
