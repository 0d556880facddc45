// `mw drift --ckpt CKPT --rollouts FILE [--json]`: SPEC §5's drift of every replay method under a
// checkpoint: logdiff and μ against the rollout's own logprobs, conditioning drift against the exact
// live-prefix score (logit-tree's), the sign split and the distribution of the signed differences.

import { driftHistogram, signedDifferences, summarizeDrift, type Histogram } from '../metrics/drift';
import type { SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { UsageError, type Command } from './command';
import { checkModelTakes, integerFlag, readCheckpointArg, requiredFlag, SCORING_METHODS, withGpu } from './model-args';
import { formatTable, loadRolloutFile, printJson } from './shared';

/** A difference counts for the sign split beyond this: float32 round-off between layouts stays below it. */
export const SIGN_EPSILON = 1e-4;
export const DEFAULT_BINS = 20;

/** The exact live-prefix score every conditioning drift is measured against (SPEC §5). */
const LIVE: SequenceMethod = 'logit-tree';

export interface SignSplit {
  /** Targets whose |difference| exceeds SIGN_EPSILON. */
  diverging: number;
  /** Of those, the share with a negative difference (null when none). */
  negativeShare: number | null;
}

export interface MethodDrift {
  /** Targets the method scores. */
  scored: number;
  /** Of those, targets with a rollout logprob: what logdiff and μ average over. */
  n: number;
  logdiff: number | null;
  mu: number | null;
  /** mean |ℓ_m − ℓ_live| and mean (ℓ_m − ℓ_live) over every scored target. */
  conditioningDrift: number | null;
  conditioningMu: number | null;
  sign: { rollout: SignSplit; conditioning: SignSplit };
  /** Signed differences; every method's histogram of one kind shares its edges. */
  histogram: { rollout: Histogram; conditioning: Histogram };
}

export interface DriftReport {
  rollouts: number;
  targets: number;
  /** Targets with a rollout logprob. */
  withLogprobs: number;
  signEpsilon: number;
  methods: Record<SequenceMethod, MethodDrift>;
}

function signSplit(differences: Float64Array): SignSplit {
  let diverging = 0;
  for (const d of differences) if (Math.abs(d) > SIGN_EPSILON) diverging++;
  return { diverging, negativeShare: diverging ? summarizeDrift(differences, SIGN_EPSILON).negativeShare : null };
}

function maxAbs(values: Iterable<Float64Array>): number | undefined {
  let m = 0;
  for (const v of values) for (const d of v) m = Math.max(m, Math.abs(d));
  return m > 0 ? m : undefined;
}

/** The drift of every method, from each method's log-probability of every target it scores. */
export function driftReport(rollouts: readonly Rollout[], scores: Record<SequenceMethod, Map<number, number>[]>, bins = DEFAULT_BINS): DriftReport {
  const rolloutLogprobs = rollouts.map((r) => {
    const m = new Map<number, number>();
    for (const id of r.targets) if (Number.isFinite(r.logprobs[id])) m.set(id, r.logprobs[id]);
    return m;
  });
  const differences = (method: SequenceMethod, reference: Map<number, number>[]) =>
    Float64Array.from(scores[method].flatMap((m, r) => Array.from(signedDifferences(m, reference[r]))));
  const vsRollout = new Map(SCORING_METHODS.map((m) => [m, differences(m, rolloutLogprobs)]));
  const vsLive = new Map(SCORING_METHODS.map((m) => [m, differences(m, scores[LIVE])]));
  const rolloutRange = maxAbs(vsRollout.values());
  const liveRange = maxAbs(vsLive.values());
  const methods = {} as Record<SequenceMethod, MethodDrift>;
  for (const method of SCORING_METHODS) {
    const d = vsRollout.get(method)!;
    const c = vsLive.get(method)!;
    const drift = summarizeDrift(d);
    const conditioning = summarizeDrift(c);
    methods[method] = {
      scored: scores[method].reduce((n, m) => n + m.size, 0),
      n: drift.n,
      logdiff: drift.n ? drift.logdiff : null,
      mu: drift.n ? drift.mu : null,
      conditioningDrift: conditioning.n ? conditioning.logdiff : null,
      conditioningMu: conditioning.n ? conditioning.mu : null,
      sign: { rollout: signSplit(d), conditioning: signSplit(c) },
      histogram: { rollout: driftHistogram(d, bins, rolloutRange), conditioning: driftHistogram(c, bins, liveRange) },
    };
  }
  return {
    rollouts: rollouts.length,
    targets: rollouts.reduce((n, r) => n + r.targets.length, 0),
    withLogprobs: rolloutLogprobs.reduce((n, m) => n + m.size, 0),
    signEpsilon: SIGN_EPSILON,
    methods,
  };
}

function driftTable(report: DriftReport): string {
  const num = (v: number | null, digits = 4) => (v === null ? '-' : v.toFixed(digits));
  const share = (s: SignSplit) => (s.negativeShare === null ? '-' : `${Math.round(100 * s.negativeShare)}% of ${s.diverging}`);
  const rows = SCORING_METHODS.map((method) => {
    const m = report.methods[method];
    return [method, m.scored, m.n, num(m.logdiff), num(m.mu), share(m.sign.rollout), num(m.conditioningDrift), num(m.conditioningMu), share(m.sign.conditioning)];
  });
  const head =
    `${report.rollouts} rollout${report.rollouts === 1 ? '' : 's'}, ${report.targets} targets, ${report.withLogprobs} with rollout logprobs; ` +
    `conditioning drift against ${LIVE} (exact live prefix); negative = share of |diff| > ${SIGN_EPSILON} below zero`;
  return `${head}\n${formatTable(['method', 'scored', 'n', 'logdiff', 'mu', 'negative', 'cond drift', 'cond mu', 'cond negative'], rows)}`;
}

export const driftCommand: Command = {
  name: 'drift',
  summary: 'train-inference and conditioning drift of every replay method under a checkpoint (GPU)',
  usage: ['mw drift --ckpt CKPT --rollouts FILE [--json] [--bins N]'],
  details: [
    'Per method (SPEC §5): logdiff = mean |ℓ_m − ℓ_rollout| and μ = mean (ℓ_m − ℓ_rollout) over the targets',
    'it scores that have rollout logprobs (n of them; null when none); conditioningDrift and conditioningMu',
    `the same against ${LIVE}'s score (each target under its exact live prefix) over every scored target.`,
    `sign: of the targets whose |difference| exceeds ${SIGN_EPSILON}, how many, and the share below zero`,
    '(naive-compressed leaks later summaries: mostly negative; naive-full sees stale context: mostly positive).',
    'histogram: the signed differences in N bins (default 20) over one symmetric range shared by all methods.',
    'FILE is any importable format; the figures pool every rollout in it.',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors)' },
    rollouts: { type: 'string', value: 'FILE', help: 'rollouts (.json, .jsonl or any importable format)' },
    bins: { type: 'string', value: 'N', help: `histogram bins (default ${DEFAULT_BINS})` },
    json: { type: 'boolean', help: 'print JSON' },
  },
  async run(args, io) {
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const path = requiredFlag(args, 'rollouts', 'FILE');
    if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (the rollouts go in --rollouts FILE)`);
    const bins = integerFlag(args, 'bins', DEFAULT_BINS, 1);
    const file = await loadRolloutFile(path);
    const { weights } = readCheckpointArg(ckpt);
    checkModelTakes(weights.config, file.rollouts, SCORING_METHODS);
    return withGpu(io, 'drift', async ({ gpu, engine }) => {
      const model = engine.createGpuModel(gpu, weights);
      let report: DriftReport;
      try {
        report = driftReport(file.rollouts, await engine.evaluate(model, file.rollouts, SCORING_METHODS), bins);
      } finally {
        model.destroy();
      }
      return () => {
        if (args.flags.json) printJson(io, report);
        else io.out(driftTable(report));
        return 0;
      };
    });
  },
};
