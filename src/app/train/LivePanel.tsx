// The episode being played, as it is written: who plays it (the expert for SFT, a lane's model for
// RL), its edits so far and the action being decoded, token by token. With "show in the views" on,
// the staircase and the tree grow with it. Paused, any rollout of a lane's last batch opens in the
// views, and the selected target is scored under every method with that lane's weights.
import { useMemo, useState } from 'react';
import { SEQUENCE_METHODS, type Method } from '../../plan/types';
import { byteTokenizer } from '../../rollout/tokenizer';
import type { EventJson } from '../../rollout/format';
import { useWorkbench } from '../store';
import { METHOD_BY_ID } from '../../present/palette';
import { orderedMethods } from '../../run/config';
import { LaneName } from './Lanes';

function liveFigures(events: readonly EventJson[]) {
  let tokens = 0;
  let edits = 0;
  let acts = 0;
  for (const e of events) {
    if (e.op === 'edit') {
      edits++;
      for (const p of e.view) if ('insert' in p) tokens += p.insert.tokens?.length ?? 0;
    } else {
      tokens += e.tokens?.length ?? 0;
      if (e.role === 'act') acts++;
    }
  }
  const last = events[events.length - 1];
  const action = last && last.op === 'append' && last.role === 'act' ? byteTokenizer.decode(last.tokens ?? []) : null;
  return { tokens, edits, acts, action };
}

export function LivePanel() {
  const live = useWorkbench((s) => s.trainLive);
  const follow = useWorkbench((s) => s.trainFollow);
  const setFollow = useWorkbench((s) => s.setTrainFollow);
  const figures = useMemo(() => (live ? liveFigures(live.events) : null), [live]);
  const player = live
    ? live.player === 'expert'
      ? 'expert (demonstration)'
      : `${METHOD_BY_ID[live.player].label}'s model${live.purpose === 'eval' ? ' (greedy evaluation, held-out prompt)' : ''}`
    : null;

  return (
    <section className="train-live" aria-label="Live episode">
      <header>
        <h3>Live episode</h3>
        <label className="toggle" title="Open the episode being played in the staircase, tree and inspector below">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} data-testid="train-follow" />
          show in the views
        </label>
      </header>
      {live && figures ? (
        <div className="live-body" data-testid="train-live">
          <div className="live-meta">
            <span className="chip-static" style={{ ['--c' as string]: live.player === 'expert' ? '#8a97a6' : METHOD_BY_ID[live.player].color }}>
              <i />
              {player}
            </span>
            <span>
              {live.purpose === 'eval' ? `after step ${live.step}` : `step ${live.step + 1}`} · episode {live.index + 1}/{live.total}
            </span>
            <span data-testid="train-live-edits">
              {figures.edits} edit{figures.edits === 1 ? '' : 's'} · {figures.acts} action{figures.acts === 1 ? '' : 's'} · {figures.tokens} tokens
            </span>
            <span className={live.done ? 'muted' : 'typing'}>{live.done ? 'finished' : 'playing…'}</span>
          </div>
          <code className="live-action" title="The last action, as decoded">
            {figures.action === null ? <span className="muted">waiting for the policy…</span> : JSON.stringify(figures.action).slice(1, -1)}
            {!live.done && <span className="caret" />}
          </code>
        </div>
      ) : (
        <p className="muted">Start a run to watch its episodes being played: edits appear as new steps of the staircase and new branches of the tree.</p>
      )}
      <BatchInspector />
    </section>
  );
}

function BatchInspector() {
  const run = useWorkbench((s) => s.trainRun);
  const batches = useWorkbench((s) => s.trainBatches);
  const phase = useWorkbench((s) => s.trainStatus.phase);
  const inspect = useWorkbench((s) => s.trainInspect);
  const scores = useWorkbench((s) => s.trainScores);
  const selected = useWorkbench((s) => s.selectedTarget);
  const shownId = useWorkbench((s) => s.view?.rollout.id ?? null);
  const [lane, setLane] = useState<Method | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (!run) return null;
  const methods = orderedMethods(run.config.methods);
  const method = lane && methods.includes(lane) ? lane : methods[0];
  const batch = batches[method];
  const idle = phase === 'paused' || phase === 'done' || phase === 'idle';
  const open = (id: string) => {
    setError(null);
    inspect(method, id).catch((e: Error) => setError(e.message));
  };
  const rl = run.config.objective === 'rl';
  const row = scores && scores.id === shownId && selected !== null ? scores.scores.ids.indexOf(selected) : -1;

  return (
    <div className="batch-inspector">
      <div className="batch-head">
        <span className="muted">last batch of</span>
        <select value={method} onChange={(e) => setLane(e.target.value as Method)} data-testid="inspect-lane">
          {methods.map((m) => (
            <option key={m} value={m}>
              {METHOD_BY_ID[m].label}
            </option>
          ))}
        </select>
        {!idle && <span className="muted">pause to inspect</span>}
      </div>
      {batch && (
        <ul className="batch-list">
          {batch.rollouts.map((r) => (
            <li key={r.id}>
              <button
                type="button"
                className="small"
                disabled={!idle}
                onClick={() => open(r.id)}
                data-testid="inspect-rollout"
                title={`open ${r.id} in the views and score it under every method`}
              >
                {r.id.replace(/^s\d+-/, '')}
              </button>
              <span className="muted">
                K {r.K} · L {r.length} · reward {r.reward}
              </span>
            </li>
          ))}
        </ul>
      )}
      {error && <p className="error-text">{error}</p>}
      {scores && scores.id === shownId && (
        <div className="scores" data-testid="inspect-scores">
          <p className="muted">
            {selected === null || row < 0
              ? 'Select a target in the views to see how each method scores it.'
              : `target ${selected}: log-probability under ${METHOD_BY_ID[scores.method].label}'s current weights; Δ against ${
                  rl ? "the rollout's own logprob" : 'the exact live-prefix score (demonstrations carry logprob 0)'
                }`}
          </p>
          {row >= 0 && (
            <table>
              <tbody>
                <tr>
                  <td>rollout (generation time)</td>
                  <td>{scores.scores.rollout[row]?.toFixed(4) ?? '—'}</td>
                  <td />
                </tr>
                {SEQUENCE_METHODS.map((m) => {
                  const values = scores.scores.methods[m];
                  const v = values ? values[row] : null;
                  const base = rl ? scores.scores.rollout[row] : (scores.scores.methods['packed-4d']?.[row] ?? null);
                  return (
                    <tr key={m}>
                      <LaneName method={m} />
                      <td>{!values ? 'not scored: the tape is longer than the model positions' : v === null ? 'not scored (dropped)' : v.toFixed(4)}</td>
                      <td className="muted">{v !== null && base !== null ? `Δ ${(v - base).toExponential(1)}` : ''}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </div>
      )}
    </div>
  );
}
