// The latest figures of each lane (one per method): loss, the objective's drift and signed drift,
// eviction structure and step time, with the lane's checkpoint export and "continue from here".
import { useState } from 'react';
import type { Method } from '../../plan/types';
import { downloadBlob } from '../export/download';
import { useWorkbench } from '../store';
import { METHOD_BY_ID } from '../../present/palette';
import { orderedMethods } from '../../run/config';
import { optimizerStatePath } from '../../model/checkpoint-name';
import { driftLabel, driftOf, signedDriftOf } from './charts/specs';
import { historyCsv, historyJsonl, type MetricHistory } from '../core/history';
import { TermText } from '../glossary/Term';

const fmt = (v: number | null | undefined, digits = 3) =>
  v === null || v === undefined || !Number.isFinite(v) ? '—' : Math.abs(v) !== 0 && Math.abs(v) < 1e-3 ? v.toExponential(2) : v.toFixed(digits);

export function Lanes() {
  const run = useWorkbench((s) => s.trainRun);
  const latest = useWorkbench((s) => s.trainLatest);
  // Re-read on each new record: the last evaluation of each lane.
  useWorkbench((s) => s.trainHistoryVersion);
  const lastEval = lastEvaluations(useWorkbench.getState().trainHistory);
  const config = useWorkbench((s) => s.trainRun?.config ?? s.trainConfig);
  const objective = config.objective;
  const methods = orderedMethods(config.methods);

  return (
    <div className="train-lanes">
      <table>
        <thead>
          <tr>
            <th>lane</th>
            <th>step</th>
            <th>loss</th>
            <th title={driftLabel(objective)}>
              <TermText text={objective === 'rl' ? 'logdiff' : 'cond. drift'} />
            </th>
            <th>
              <TermText text="μ" />
            </th>
            <th title="exact match of the lane's last greedy play on the held-out prompts">held-out EM</th>
            {objective === 'rl' && <th title="mean reward of the last batch the lane's model played">reward</th>}
            <th>
              <TermText text="K" />
            </th>
            <th>
              <TermText text="N_packed / N_final" />
            </th>
            <th>ms / step</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {methods.map((m) => {
            const r = latest[m];
            return (
              <tr key={m}>
                <LaneName method={m} />
                <td>{r?.step ?? 0}</td>
                <td data-testid={m === methods[0] ? 'metric-loss' : `metric-loss-${m}`}>{fmt(r?.loss)}</td>
                <td data-testid={`metric-logdiff-${m}`} data-value={r ? String(driftOf(r, objective) ?? '') : ''}>
                  {fmt(r ? driftOf(r, objective) : null)}
                </td>
                <td>{fmt(r ? signedDriftOf(r, objective) : null)}</td>
                <td data-testid={`metric-heldout-${m}`} data-value={lastEval[m] ?? ''}>
                  {fmt(lastEval[m] ?? null, 2)}
                </td>
                {objective === 'rl' && <td>{fmt(r?.reward, 2)}</td>}
                <td>{r ? r.K.toFixed(1) : '—'}</td>
                <td>{r ? `${r.nPacked} / ${r.nFinal}` : '—'}</td>
                <td>{r ? r.stepMs.toFixed(0) : '—'}</td>
                <td>{run && <LaneActions method={m} />}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {run && <HistoryExports />}
    </div>
  );
}

/** A lane's name with its method's colour, as a table cell. */
export function LaneName({ method }: { method: Method }) {
  return (
    <td className="lane" style={{ ['--c' as string]: METHOD_BY_ID[method].color }}>
      <i />
      {METHOD_BY_ID[method].label}
    </td>
  );
}

function lastEvaluations(history: MetricHistory): Partial<Record<Method, number>> {
  const out: Partial<Record<Method, number>> = {};
  for (const [m, lane] of history.byMethod) {
    const last = lane.findLast((r) => r.evalEm !== null);
    if (last) out[m] = last.evalEm!;
  }
  return out;
}

function LaneActions({ method }: { method: Method }) {
  const exportCheckpoint = useWorkbench((s) => s.trainExportCheckpoint);
  const continueFrom = useWorkbench((s) => s.trainContinueFrom);
  const phase = useWorkbench((s) => s.trainStatus.phase);
  const objective = useWorkbench((s) => s.trainRun?.config.objective);
  const [busy, setBusy] = useState(false);
  const idle = phase === 'paused' || phase === 'done';
  const save = async () => {
    setBusy(true);
    try {
      const file = await exportCheckpoint(method);
      downloadBlob(new Blob([file.weights as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), `${file.name}.safetensors`);
      downloadBlob(new Blob([file.optimizer as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }), optimizerStatePath(`${file.name}.safetensors`));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="lane-actions">
      <button
        type="button"
        className="small"
        disabled={busy}
        onClick={() => void save()}
        data-testid={`export-checkpoint-${method}`}
        title="Download this lane's weights (GPT-2 safetensors) and AdamW state"
      >
        ⤓ ckpt
      </button>
      {objective === 'sft' && (
        <button
          type="button"
          className="small"
          disabled={!idle}
          data-testid={`continue-rl-${method}`}
          title="Keep these weights and set up an RL run from them (same seed)"
          onClick={() => void continueFrom(method, { objective: 'rl' })}
        >
          → RL from here
        </button>
      )}
    </span>
  );
}

function HistoryExports() {
  const save = (kind: 'jsonl' | 'csv') => {
    const s = useWorkbench.getState();
    const text = kind === 'jsonl' ? historyJsonl(s.trainHistory) : historyCsv(s.trainHistory);
    downloadBlob(new Blob([text], { type: kind === 'csv' ? 'text/csv' : 'application/x-ndjson' }), `${s.trainRun?.id ?? 'run'}-metrics.${kind}`);
  };
  return (
    <div className="history-exports">
      <span className="muted">metrics</span>
      {(['jsonl', 'csv'] as const).map((kind) => (
        <button key={kind} type="button" className="small" onClick={() => save(kind)} data-testid={`export-metrics-${kind}`}>
          {kind.toUpperCase()}
        </button>
      ))}
    </div>
  );
}
