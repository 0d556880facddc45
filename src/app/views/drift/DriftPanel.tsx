// Drift under each replay method (docs/metrics.md), once a model has scored the shown rollout in the
// scoring worker: per method, logdiff and signed drift μ against the exact live-prefix score and
// against the rollout's own logprobs, the drift a sampler should expect (exact, from both log-probability
// rows), and a histogram of the signed differences (one shared axis).
import { scaleLinear } from 'd3';
import { useMemo, useState } from 'react';
import { checkSampling, type SamplingOptions } from '../../../harness/policies/model';
import type { MethodExpectedDrift } from '../../../metrics/expected-drift';
import { expectedOf, type MethodDrift } from '../../core/drift';
import { useWorkbench } from '../../store';
import { INK, METHOD_BY_ID } from '../../../plan/palette';
import { driftColor, formatDelta } from './colors';
import { TermText } from '../../glossary/Term';

export function DriftPanel() {
  const model = useWorkbench((s) => s.model);
  const modelLoading = useWorkbench((s) => s.modelLoading);
  const drift = useWorkbench((s) => s.drift);
  const scoring = useWorkbench((s) => s.scoring);
  const driftError = useWorkbench((s) => s.driftError);
  const openCheckpoint = useWorkbench((s) => s.openCheckpoint);
  const sampler = useWorkbench((s) => s.sampler);
  const expected = useMemo(() => (drift ? expectedOf(drift, sampler) : null), [drift, sampler]);

  return (
    <section className="panel drift" aria-label="Drift" data-tour="drift">
      <header className="panel-head">
        <h2>Drift under each method</h2>
        {model ? (
          <span className="hint" data-testid="model-info">
            model <strong>{model.name}</strong> · {model.description} · {model.adapter}
          </span>
        ) : (
          <span className="hint">score every target with a GPT-2 checkpoint (safetensors) on WebGPU</span>
        )}
        <label className="button exports-right">
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
      </header>
      {modelLoading && <p className="pad muted">Loading {modelLoading} onto the GPU…</p>}
      {scoring && (
        <p className="pad muted" data-testid="drift-progress">
          Scoring on WebGPU: {METHOD_BY_ID[scoring.method].label} ({scoring.done + 1} of {scoring.total})…
        </p>
      )}
      {driftError && (
        <p className="pad error-text" role="alert" data-testid="drift-error">
          {driftError}
        </p>
      )}
      {drift && (
        <div className="drift-body" data-testid="drift-table">
          <table className="drift-table">
            <thead>
              <tr>
                <th>method</th>
                <th title="Targets the method scores">scored</th>
                <th title="mean |ℓ_m − ℓ_live|: conditioning drift against the exact live-prefix score">
                  <TermText text="logdiff vs live" />
                </th>
                <th title="mean (ℓ_m − ℓ_live)">
                  <TermText text="μ vs live" />
                </th>
                <th title="mean |ℓ_m − ℓ_rollout|, against the rollout's own logprobs">
                  <TermText text="logdiff vs rollout" />
                </th>
                <th title="mean (ℓ_m − ℓ_rollout)">
                  <TermText text="μ vs rollout" />
                </th>
                <th title="mean over targets of Σ_a s(a)(log q_m(a) − log p(a)): the signed drift the sampler below should expect, exact (p: the live view's distribution, s: the sampler's, q_m: the method's). At temperature 1 it is −KL(p ‖ q_m) ≤ 0 for every method.">
                  <TermText text="expected μ" />
                </th>
              </tr>
            </thead>
            <tbody>
              {drift.methods.map((m) => (
                <tr key={m.method} data-method={m.method}>
                  <td>
                    <i className="swatch" style={{ background: METHOD_BY_ID[m.method].color }} />
                    {METHOD_BY_ID[m.method].label}
                  </td>
                  {m.error ? (
                    <td colSpan={6} className="muted">
                      not scored: {m.error}
                    </td>
                  ) : (
                    <>
                      <td>{m.vsLive.n}</td>
                      <td data-testid={`drift-logdiff-${m.method}`}>{m.vsLive.logdiff.toFixed(4)}</td>
                      <td data-testid={`drift-mu-${m.method}`}>{formatDelta(m.vsLive.mu)}</td>
                      <td>{m.vsRollout ? m.vsRollout.logdiff.toFixed(4) : '—'}</td>
                      <td>{m.vsRollout ? formatDelta(m.vsRollout.mu) : '—'}</td>
                      <ExpectedCell method={m.method} e={expected?.get(m.method) ?? null} />
                    </>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
          <SamplerForm />
          <div className="histograms" aria-label="Histograms of ℓ_m − ℓ_live">
            {drift.methods.map((m) => (m.error ? null : <Histogram key={m.method} m={m} range={drift.range} />))}
            <ColorBar range={drift.range} />
          </div>
        </div>
      )}
    </section>
  );
}

function ExpectedCell({ method, e }: { method: string; e: MethodExpectedDrift | null }) {
  if (!e || e.mu === null) return <td>—</td>;
  const { diverging, negativeShare } = e.sign;
  const title = negativeShare === null ? 'no target expects a drift beyond 1e-4' : `${Math.round(100 * negativeShare)}% of ${diverging} targets expect a loss`;
  return (
    <td data-testid={`drift-expected-${method}`} data-value={String(e.mu)} title={title}>
      {formatDelta(e.mu)}
    </td>
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
      <span className="muted">expected μ assumes a sampler:</span>
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

const H = { w: 168, h: 86, left: 6, right: 6, top: 16, bottom: 18 };

function Histogram({ m, range }: { m: MethodDrift; range: number }) {
  const { counts, edges } = m.histogram;
  const x = scaleLinear().domain([-range, range]).range([H.left, H.w - H.right]);
  const y = scaleLinear()
    .domain([0, Math.max(1, ...counts)])
    .range([H.h - H.bottom, H.top]);
  const color = METHOD_BY_ID[m.method].color;
  return (
    <svg width={H.w} height={H.h} className="histogram" data-method={m.method}>
      <text x={H.left} y={11} fontSize={10.5} fill={color} fontWeight={600}>
        {METHOD_BY_ID[m.method].short}
      </text>
      <text x={H.w - H.right} y={11} fontSize={10} fill={INK.muted} textAnchor="end">
        μ {formatDelta(m.vsLive.mu)}
      </text>
      {counts.map((c, i) =>
        c ? <rect key={i} x={x(edges[i]) + 0.5} y={y(c)} width={Math.max(1, x(edges[i + 1]) - x(edges[i]) - 1)} height={y(0) - y(c)} fill={color} /> : null,
      )}
      <line x1={x(0)} x2={x(0)} y1={H.top - 2} y2={H.h - H.bottom} stroke={INK.text} strokeDasharray="2 2" strokeWidth={0.8} />
      <line x1={H.left} x2={H.w - H.right} y1={H.h - H.bottom + 0.5} y2={H.h - H.bottom + 0.5} stroke={INK.line} />
      {[-range, 0, range].map((t) => (
        <text key={t} x={x(t)} y={H.h - 5} fontSize={9} fill={INK.muted} textAnchor={t < 0 ? 'start' : t > 0 ? 'end' : 'middle'}>
          {formatDelta(t)}
        </text>
      ))}
    </svg>
  );
}

/** The colour of a target cell when targets are coloured by drift. */
function ColorBar({ range }: { range: number }) {
  const color = driftColor(range);
  const stops = Array.from({ length: 11 }, (_, i) => -range + (2 * range * i) / 10);
  return (
    <svg width={H.w} height={H.h} className="histogram">
      <text x={H.left} y={11} fontSize={10.5} fill={INK.text} fontWeight={600}>
        cell colour: ℓ_m − ℓ_live
      </text>
      <defs>
        <linearGradient id="drift-gradient">
          {stops.map((s, i) => (
            <stop key={i} offset={`${i * 10}%`} stopColor={color(s)} />
          ))}
        </linearGradient>
      </defs>
      <rect x={H.left} y={30} width={H.w - H.left - H.right} height={14} fill="url(#drift-gradient)" />
      <text x={H.left} y={58} fontSize={9} fill={INK.muted}>
        {formatDelta(-range)} nats
      </text>
      <text x={H.w - H.right} y={58} fontSize={9} fill={INK.muted} textAnchor="end">
        {formatDelta(range)}
      </text>
      <text x={H.w / 2} y={58} fontSize={9} fill={INK.muted} textAnchor="middle">
        0
      </text>
      <text x={H.left} y={76} fontSize={9} fill={INK.muted}>
        red: scored lower than live
      </text>
    </svg>
  );
}
