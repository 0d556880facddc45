// Drift under each method (docs/metrics.md), once a model has scored the shown rollout in the scoring
// worker: per method, logdiff and signed drift μ against the exact live-prefix score and (when the
// rollout records this model's log-probabilities) against the rollout, the drift a sampler should
// expect, SDCC's KL at the diverging leaves, and histograms of the per-target differences. The demo
// model is one click away; the checkpoint is kept in IndexedDB and loaded again on start.
import { useMemo, useState, type ReactNode } from 'react';
import { checkSampling, type SamplingOptions } from '../../../harness/policies/model';
import type { MethodExpectedDrift } from '../../../metrics/expected-drift';
import { INK, METHOD_BY_ID } from '../../../present/palette';
import { duration } from '../../../present/progress';
import { comparesWithRollout, expectedOf, type DriftData, type MethodDrift } from '../../core/drift';
import { binValues, DRIFT_BINS, driftBins } from '../../core/histogram';
import { downloadText, fileStem } from '../../export/download';
import { driftCsv } from '../../export/driftCsv';
import type { ScoredMethod } from '../../protocol/score';
import { useWorkbench } from '../../store';
import { driftColor } from '../common/colors';
import { formatEffect, formatMagnitude } from '../../../present/number';
import { DriftHistogram } from './DriftHistogram';
import { DriftJunctions } from './DriftJunctions';
import { DriftReach } from './DriftReach';
import { DriftTerms } from './DriftTerms';
import { DriftVerdict } from './DriftVerdict';
import { LogprobNotice } from './LogprobNotice';
import { Term } from './Term';
import { pickedFolder } from '../../load/modelFolder';
import { HubModelForm } from './HubModelForm';
import './drift.css';

/** A model on its way to the GPU: a folder's weights in bytes of their total (a checkpoint: its name). */
function ModelLoadProgress({ name }: { name: string }) {
  const progress = useWorkbench((s) => s.modelLoadProgress);
  if (!progress) return <p className="pad muted">Loading {name} onto the GPU…</p>;
  const label = `Loading ${name} onto the GPU: ${mib(progress.bytes)} of ${mib(progress.total)}`;
  return (
    <div className="pad progress" data-testid="model-load-progress" data-bytes={progress.bytes} data-total={progress.total}>
      <progress max={1} value={progress.total ? progress.bytes / progress.total : 0} aria-label={label} />
      <span>{label}</span>
    </div>
  );
}

function mib(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

export function DriftPanel() {
  const model = useWorkbench((s) => s.model);
  const modelLoading = useWorkbench((s) => s.modelLoading);
  const drift = useWorkbench((s) => (s.driftView === s.view ? s.drift : null));
  const scoring = useWorkbench((s) => s.scoring);
  const driftError = useWorkbench((s) => s.driftError);
  const openCheckpoint = useWorkbench((s) => s.openCheckpoint);
  const openModelFolder = useWorkbench((s) => s.openModelFolder);
  const modelNotice = useWorkbench((s) => s.modelNotice);
  const useDemoModel = useWorkbench((s) => s.useDemoModel);
  const scoringCancelled = useWorkbench((s) => s.scoringCancelled);
  const scoreView = useWorkbench((s) => s.scoreView);

  return (
    <section className="panel drift" aria-label="Drift" data-tour="drift">
      <header className="panel-head">
        <h2>Drift under each method</h2>
        {model ? (
          <span className="hint" data-testid="model-info">
            model <strong>{model.name}</strong> · {model.description}
            {model.tokenizer ? ` · tokenizer ${model.tokenizer}` : ''} · {model.adapter}
            {model.restored ? ' · kept from your last visit' : ''}
          </span>
        ) : (
          <span className="hint">how far each way of replaying the rollout for training moves the policy&apos;s own log-probabilities</span>
        )}
        <span className="drift-actions">
          <button
            type="button"
            onClick={() => void useDemoModel()}
            disabled={modelLoading !== null}
            data-testid="use-demo-model"
            title="Load the small GPT-2 this app ships (public/models/demo.safetensors) and score the rollout with it"
          >
            Use the demo model
          </button>
          <label className="button">
            {model ? 'Other checkpoint…' : 'Load checkpoint…'}
            <input
              type="file"
              accept=".safetensors,application/octet-stream"
              data-testid="checkpoint-file-input"
              onChange={(e) => {
                const file = e.currentTarget.files?.[0];
                if (file) void openCheckpoint(file, file.name);
                e.currentTarget.value = '';
              }}
            />
          </label>
          <label
            className="button"
            title="A Llama / Qwen2 / Qwen3 model folder as the Hub publishes it (config.json, model.safetensors or its shards with model.safetensors.index.json, tokenizer.json, tokenizer_config.json): read a tensor at a time, never copied whole; its tokenizer and chat template become how imported logs are tokenized"
          >
            Open model folder…
            <input
              type="file"
              webkitdirectory=""
              multiple
              data-testid="model-folder-input"
              onChange={(e) => {
                const folder = pickedFolder(Array.from(e.currentTarget.files ?? []));
                if (folder) void openModelFolder(folder.name, folder.files);
                e.currentTarget.value = '';
              }}
            />
          </label>
        </span>
      </header>
      <HubModelForm />
      {!model && !modelLoading && (
        <p className="pad muted drift-empty">
          A GPT-2 checkpoint (safetensors), or a Llama / Qwen model folder (picked, or dropped anywhere), scores every target of the rollout on WebGPU under
          each training method; the demo model was trained on the built-in examples&apos; task.
        </p>
      )}
      {modelNotice && !modelLoading && (
        <p className="pad muted" data-testid="model-notice">
          {modelNotice}
        </p>
      )}
      {modelLoading && <ModelLoadProgress name={modelLoading} />}
      {scoring && <ScoringProgress />}
      {scoring && <StaleDrift />}
      {scoringCancelled && !scoring && (
        <p className="pad muted" data-testid="drift-cancelled">
          Scoring cancelled.{' '}
          <button type="button" className="small" onClick={() => void scoreView({ again: true })} data-testid="drift-score-again">
            Score this rollout
          </button>
        </p>
      )}
      {driftError && (
        <p className="pad error-text" role="alert" data-testid="drift-error">
          {driftError}
          {/does not fit the adapter/.test(driftError) && (
            <span className="muted">
              {' '}
              This browser&apos;s WebGPU adapter cannot hold it: a smaller checkpoint (distilgpt2) may fit, or score it with mw drift on the command line.
            </span>
          )}
        </p>
      )}
      {drift && <DriftBody drift={drift} />}
    </section>
  );
}

/** The playground's last figures while its change is scored: each method's μ vs live, marked stale. */
function StaleDrift() {
  const stale = useWorkbench((s) => s.staleDrift);
  if (!stale) return null;
  const parts = stale.methods.filter((m) => !m.error).map((m) => `${METHOD_BY_ID[m.method].label} ${formatEffect(m.vsLive.mu)}`);
  return (
    <p className="pad muted drift-stale" data-testid="drift-stale">
      Stale, from before your last change (the new figures replace them when scored): μ vs live {parts.join(' · ')}
    </p>
  );
}

/** Tokens forwarded of every method's plans, the method under way, the time left at the rate so far, and a cancel. */
function ScoringProgress() {
  const scoring = useWorkbench((s) => s.scoring)!;
  const cancel = useWorkbench((s) => s.cancelScoring);
  const { tokens, tokensTotal } = scoring;
  const elapsed = (performance.now() - scoring.startedAt) / 1000;
  const left = tokens > 0 && tokens < tokensTotal ? (elapsed * (tokensTotal - tokens)) / tokens : null;
  return (
    <div className="pad progress drift-progress" data-testid="drift-progress" data-tokens={tokens} data-total={tokensTotal}>
      <progress max={Math.max(tokensTotal, 1)} value={tokens} aria-label="Tokens scored" />
      <span>
        Scoring on WebGPU: {METHOD_BY_ID[scoring.method].label} ({scoring.done + 1} of {scoring.total}) · {tokens.toLocaleString('en-US')} of{' '}
        {tokensTotal.toLocaleString('en-US')} tokens{left !== null ? ` · about ${duration(left)} left` : ''}
      </span>
      <button type="button" className="small" onClick={cancel} data-testid="drift-cancel">
        Cancel
      </button>
    </div>
  );
}

function DriftBody({ drift }: { drift: DriftData }) {
  const view = useWorkbench((s) => s.view)!;
  const sampler = useWorkbench((s) => s.sampler);
  const expected = useMemo(() => expectedOf(drift, sampler), [drift, sampler]);
  const [axis, setAxis] = useState<'own' | 'shared'>('own');
  const [log, setLog] = useState(false);
  const withRollout = comparesWithRollout(drift);
  const student = drift.methods.find((m) => m.method === 'naive-compressed');
  return (
    <div className="drift-body" data-testid="drift-table">
      <LogprobNotice source={drift.logprobs} />
      <DriftReach drift={drift} />
      <p className="caption">
        Each row replays this rollout the way one training method would: <Term name="logdiff" /> is how far, on average, it moves the log-probability of each
        token the policy generated, and <Term name="μ" /> the average direction (below zero: the method makes the policy&apos;s tokens look less likely than
        they were; what each method&apos;s sign means, and whether it is beyond the noise floor, is in the verdict under the table).
      </p>
      <table className="drift-table">
        <thead>
          <tr className="group">
            <th colSpan={2} />
            <th colSpan={3} title="ℓ_live: the exact live-prefix score, computed by LogitTree">
              vs live prefix (<Term name="conditioning drift" />)
            </th>
            {withRollout && <th colSpan={2}>vs the rollout&apos;s logprobs</th>}
            <th />
          </tr>
          <tr>
            <th>method</th>
            <th title="Targets the method scores (Naive-Compressed and SDCC's student skip the dropped ones)">scored</th>
            <th title="mean |ℓ_m − ℓ_live|">logdiff</th>
            <th title="mean (ℓ_m − ℓ_live)">μ</th>
            <th title="mean over targets of Σ_a s(a)(log q_m(a) − log p(a)): the μ the sampler below should expect, exact (p: the live view's distribution, s: the sampler's, q_m: the method's). At temperature 1 it is −KL(p ‖ q_m) ≤ 0 for every method.">
              <Term name="expected μ" />
            </th>
            {withRollout && (
              <>
                <th title="mean |ℓ_m − ℓ_rollout|">logdiff</th>
                <th title="mean (ℓ_m − ℓ_rollout)">μ</th>
              </>
            )}
            <th title="mean KL(π(·|live prefix) ‖ π(·|final prefix)) over the diverging leaves: what SDCC adds to its loss">
              <Term name="KL_SDCC" />
            </th>
          </tr>
        </thead>
        <tbody>
          {drift.methods.map((m) => (
            <MethodRow
              key={m.method}
              id={m.method}
              m={m}
              label={METHOD_BY_ID[m.method].label}
              scored={m.vsLive.n}
              e={expected.get(m.method) ?? null}
              withRollout={withRollout}
            />
          ))}
          {drift.sdcc.error || !student ? (
            <tr data-method="sdcc">
              <td>
                <i className="swatch" style={{ background: METHOD_BY_ID.sdcc.color }} />
                SDCC
              </td>
              <td colSpan={withRollout ? 7 : 5} className="muted">
                not scored: {drift.sdcc.error}
              </td>
            </tr>
          ) : (
            <MethodRow
              id="sdcc"
              m={student}
              label="SDCC"
              note="student: the final walk"
              scored={drift.sdcc.n}
              e={expected.get('naive-compressed') ?? null}
              withRollout={withRollout}
              kl={
                <td
                  data-testid="drift-kl-sdcc"
                  data-value={String(drift.sdcc.meanKl)}
                  data-pairs={drift.sdcc.kl.size}
                  title={`mean over ${drift.sdcc.kl.size} diverging leaves`}
                >
                  {formatMagnitude(drift.sdcc.meanKl)} <span className="muted">D {drift.sdcc.kl.size}</span>
                </td>
              }
            />
          )}
        </tbody>
      </table>
      <DriftVerdict drift={drift} />
      <DriftJunctions view={view} drift={drift} />
      <SamplerForm />
      <div className="histogram-controls">
        <div className="segmented" role="group" aria-label="Histogram axis">
          <button
            type="button"
            aria-pressed={axis === 'own'}
            onClick={() => setAxis('own')}
            data-testid="histogram-axis-own"
            title="Each histogram on the range of its own drift"
          >
            each its own axis
          </button>
          <button
            type="button"
            aria-pressed={axis === 'shared'}
            onClick={() => setAxis('shared')}
            data-testid="histogram-axis-shared"
            title="Every histogram on one axis, to compare sizes"
          >
            one shared axis
          </button>
        </div>
        <label className="check">
          <input type="checkbox" checked={log} onChange={(e) => setLog(e.currentTarget.checked)} data-testid="histogram-log" /> log counts
        </label>
        <button
          type="button"
          className="small"
          data-testid="export-drift-csv"
          title="Save every target's scores under each method, and their differences, as CSV"
          onClick={() => downloadText(driftCsv(view, drift), `${fileStem(view.rollout.id)}-drift.csv`, 'text/csv')}
        >
          Drift CSV
        </button>
      </div>
      <p className="caption">
        How many targets each method moves, and by how much: bars count targets by ℓ_m − ℓ_live in nats (hover one), a bar at 0 means the method scores those
        targets exactly as the policy saw them, and the small end bars count the tails beyond the axis.
      </p>
      <div className="histograms" aria-label="Histograms of ℓ_m − ℓ_live">
        {drift.methods.map((m) =>
          m.error ? null : (
            <DriftHistogram
              key={m.method}
              testId={`histogram-${m.method}`}
              title={METHOD_BY_ID[m.method].label}
              color={METHOD_BY_ID[m.method].color}
              figure={`μ ${formatEffect(m.vsLive.mu)}`}
              bins={driftBins(m.deltas, axis === 'own' ? m.ownRange : drift.range)}
              log={log}
              format={formatEffect}
            />
          ),
        )}
        {!drift.sdcc.error && <SdccHistogram drift={drift} log={log} />}
      </div>
      <ColorBar range={drift.range} />
      <DriftTerms />
    </div>
  );
}

function MethodRow(props: {
  id: ScoredMethod | 'sdcc';
  m: MethodDrift;
  label: string;
  note?: string;
  scored: number;
  e: MethodExpectedDrift | null;
  withRollout: boolean;
  kl?: ReactNode;
}) {
  const { id, m, label, note, scored, e, withRollout, kl } = props;
  const cols = withRollout ? 7 : 5;
  return (
    <tr data-method={id}>
      <td>
        <i className="swatch" style={{ background: METHOD_BY_ID[id].color }} />
        {label}
        {note && <span className="muted row-note"> ({note})</span>}
      </td>
      {m.error ? (
        <td colSpan={cols} className="muted">
          not scored: {m.error}
        </td>
      ) : (
        <>
          <td data-testid={`drift-scored-${id}`}>{scored}</td>
          <td data-testid={`drift-logdiff-${id}`} data-value={String(m.vsLive.logdiff)}>
            {formatMagnitude(m.vsLive.logdiff)}
          </td>
          <td data-testid={`drift-mu-${id}`} data-value={String(m.vsLive.mu)}>
            {formatEffect(m.vsLive.mu)}
          </td>
          <ExpectedCell method={id} e={e} rowsKept={m.rowsComplete} />
          {withRollout && (
            <>
              <td data-testid={`drift-logdiff-rollout-${id}`} data-value={String(m.vsRollout?.logdiff ?? '')}>
                {m.vsRollout ? formatMagnitude(m.vsRollout.logdiff) : '—'}
              </td>
              <td data-testid={`drift-mu-rollout-${id}`} data-value={String(m.vsRollout?.mu ?? '')}>
                {m.vsRollout ? formatEffect(m.vsRollout.mu) : '—'}
              </td>
            </>
          )}
          {kl ?? <td className="muted">—</td>}
        </>
      )}
    </tr>
  );
}

function ExpectedCell({ method, e, rowsKept }: { method: string; e: MethodExpectedDrift | null; rowsKept: boolean }) {
  if (!rowsKept) {
    return (
      <td
        className="muted"
        title="not computed: it needs the full distribution at every target, which a vocabulary this large (GPT-2's 50,257) keeps only at the diverging leaves"
      >
        —
      </td>
    );
  }
  if (!e || e.mu === null) return <td>—</td>;
  const { diverging, negativeShare } = e.sign;
  const title = negativeShare === null ? 'no target expects a drift beyond 1e-4' : `${Math.round(100 * negativeShare)}% of ${diverging} targets expect a loss`;
  return (
    <td data-testid={`drift-expected-${method}`} data-value={String(e.mu)} title={title}>
      {formatEffect(e.mu)}
    </td>
  );
}

function SdccHistogram({ drift, log }: { drift: DriftData; log: boolean }) {
  const kl = Float64Array.from(drift.sdcc.kl.values());
  const bins = binValues(kl, 0, drift.sdcc.range, DRIFT_BINS - 1);
  return (
    <DriftHistogram
      testId="histogram-sdcc"
      title="SDCC · KL per leaf"
      color={METHOD_BY_ID.sdcc.color}
      figure={`mean ${formatMagnitude(drift.sdcc.meanKl)}`}
      bins={bins}
      log={log}
      format={(x) => (x === 0 ? '0' : formatEffect(x).replace('+', ''))}
      idle={kl.length ? `KL at ${kl.length} diverging leaves · hover a bar` : 'no diverging leaf: KL_SDCC is 0'}
    />
  );
}

const SAMPLER_FIELDS = [
  { key: 'temperature', label: 'temperature', step: 0.1, help: 'softmax temperature of the sampler (0: greedy)' },
  { key: 'topK', label: 'top-k', step: 1, help: 'sample among the k most likely tokens (0: all)' },
  { key: 'topP', label: 'top-p', step: 0.05, help: 'then among the fewest most likely tokens holding probability p (1: all)' },
] as const;

/** The sampler the expected drift assumes; a value is taken once valid (the URL keeps it). */
function SamplerForm() {
  const sampler = useWorkbench((s) => s.sampler);
  const setSampler = useWorkbench((s) => s.setSampler);
  const [draft, setDraft] = useState<Record<string, string> | null>(null);
  const [error, setError] = useState<string | null>(null);
  const shown = draft ?? { temperature: String(sampler.temperature), topK: String(sampler.topK), topP: String(sampler.topP) };
  const change = (key: keyof SamplingOptions, text: string) => {
    const next = { ...shown, [key]: text };
    setDraft(next);
    try {
      if (Object.values(next).some((v) => v.trim() === '')) throw new Error('every field needs a number');
      setSampler(checkSampling({ temperature: Number(next.temperature), topK: Number(next.topK), topP: Number(next.topP) }));
      setError(null);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <div className="sampler" aria-label="Sampler of the expected drift">
      <span className="muted">
        <Term name="expected μ" /> assumes a sampler:
      </span>
      {SAMPLER_FIELDS.map((f) => (
        <label key={f.key} title={f.help}>
          {f.label}
          <input
            type="number"
            step={f.step}
            min={0}
            value={shown[f.key]}
            data-testid={`sampler-${f.key}`}
            onChange={(e) => change(f.key, e.currentTarget.value)}
            onBlur={() => {
              if (!error) setDraft(null);
            }}
          />
        </label>
      ))}
      {error && (
        <span className="error-text" role="alert" data-testid="sampler-error">
          {error}
        </span>
      )}
    </div>
  );
}

/** The colour of a target cell when targets are coloured by drift. */
function ColorBar({ range }: { range: number }) {
  const color = driftColor(range);
  const stops = Array.from({ length: 11 }, (_, i) => -range + (2 * range * i) / 10);
  const W = 220;
  return (
    <div className="colorbar">
      <svg width={W} height={30} aria-hidden>
        <defs>
          <linearGradient id="drift-gradient">
            {stops.map((s, i) => (
              <stop key={i} offset={`${i * 10}%`} stopColor={color(s)} />
            ))}
          </linearGradient>
        </defs>
        <rect x={4} y={2} width={W - 8} height={10} fill="url(#drift-gradient)" />
        <text x={4} y={26} fontSize={9.5} fill={INK.muted}>
          {formatEffect(-range)}
        </text>
        <text x={W / 2} y={26} fontSize={9.5} fill={INK.muted} textAnchor="middle">
          0 nats
        </text>
        <text x={W - 4} y={26} fontSize={9.5} fill={INK.muted} textAnchor="end">
          {formatEffect(range)}
        </text>
      </svg>
      <span className="caption">
        Cell colours when targets are coloured by drift (staircase and tree): ℓ_m − ℓ_live, red where the method scores the target lower than the policy&apos;s
        own view did, blue higher.
      </span>
    </div>
  );
}
