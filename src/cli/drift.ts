// `mw drift --ckpt CKPT --rollouts FILE [--json]`: the drift (docs/metrics.md) of every replay method under a
// checkpoint: logdiff and μ against the rollout's own logprobs, conditioning drift against the exact
// live-prefix score (logit-tree's), the sign split and the distribution of the signed differences.

import { describeSampling, FULL_SAMPLING } from '../harness/policies/model';
import { DEFAULT_BINS, LIVE, SIGN_EPSILON, driftReport, logprobsOf, type DriftReport, type SignSplit } from '../metrics/drift-report';
import { expectedDrift, type ExpectedDriftReport } from '../metrics/expected-drift';
import { SEQUENCE_METHODS } from '../plan/types';
import { UsageError, type Command } from './command';
import { checkModelTakes, integerFlag, readCheckpointArg, requiredFlag, samplingFlags, samplingFromArgs, withGpu } from './model-args';
import { formatTable, loadRolloutFile, printJson } from './shared';

// The computation lives in src/metrics/drift-report.ts (mw experiment matrix shares it).
export { DEFAULT_BINS, SIGN_EPSILON, driftReport, type DriftReport, type MethodDrift, type SignSplit } from '../metrics/drift-report';

/** `mw drift --json`: the figures of docs/metrics.md per method, and the drift the sampler should expect. */
export type DriftOutput = DriftReport & { expected: ExpectedDriftReport };

function driftTable(report: DriftOutput): string {
  const num = (v: number | null, digits = 4) => (v === null ? '-' : v.toFixed(digits));
  const share = (s: SignSplit) => (s.negativeShare === null ? '-' : `${Math.round(100 * s.negativeShare)}% of ${s.diverging}`);
  const rows = SEQUENCE_METHODS.map((method) => {
    const m = report.methods[method];
    const e = report.expected.methods[method]!;
    return [method, m.scored, m.n, num(m.logdiff), num(m.mu), share(m.sign.rollout), num(m.conditioningDrift), num(m.conditioningMu), share(m.sign.conditioning), num(e.mu), share(e.sign)];
  });
  const head =
    `${report.rollouts} rollout${report.rollouts === 1 ? '' : 's'}, ${report.targets} targets, ${report.withLogprobs} with rollout logprobs; ` +
    `conditioning drift against ${LIVE} (exact live prefix); negative = share of |diff| > ${SIGN_EPSILON} below zero; ` +
    `expected mu = the signed drift a ${describeSampling(report.expected.sampling)} sampler should expect at each target (exact, no sampling noise)`;
  return `${head}\n${formatTable(['method', 'scored', 'n', 'logdiff', 'mu', 'negative', 'cond drift', 'cond mu', 'cond negative', 'expected mu', 'exp negative'], rows)}`;
}

export const driftCommand: Command = {
  name: 'drift',
  summary: 'train-inference and conditioning drift of every replay method under a checkpoint (GPU)',
  usage: ['mw drift --ckpt CKPT --rollouts FILE [--json] [--bins N] [--temperature T] [--top-k K] [--top-p P]'],
  details: [
    'Per method (docs/metrics.md): logdiff = mean |ℓ_m − ℓ_rollout| and μ = mean (ℓ_m − ℓ_rollout) over the targets',
    'it scores that have rollout logprobs (n of them; null when none); conditioningDrift and conditioningMu',
    `the same against ${LIVE}'s score (each target under its exact live prefix) over every scored target.`,
    `sign: of the targets whose |difference| exceeds ${SIGN_EPSILON}, how many, and the share below zero`,
    '(naive-compressed leaks later summaries: mostly negative; naive-full sees stale context: mostly positive).',
    'histogram: the signed differences in N bins (default 20) over one symmetric range shared by all methods.',
    'expected: per method, the signed drift a sampler (--temperature/--top-k/--top-p, default temperature 1) should',
    'expect at each target, Σ_a s(a)(log q_m(a) − log p(a)) with p the live-prefix distribution, s the sampler\'s and',
    'q_m the method\'s: exact, where μ averages one sample per target. At temperature 1 it is −KL(p ‖ q_m) ≤ 0 for every',
    'method: only a sampler sharper than p can make a replay\'s expected drift positive.',
    'FILE is any importable format; the figures pool every rollout in it.',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors)' },
    rollouts: { type: 'string', value: 'FILE', help: 'rollouts (.json, .jsonl or any importable format)' },
    bins: { type: 'string', value: 'N', help: `histogram bins (default ${DEFAULT_BINS})` },
    json: { type: 'boolean', help: 'print JSON' },
    ...samplingFlags('expected drift: ', FULL_SAMPLING),
  },
  async run(args, io) {
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const path = requiredFlag(args, 'rollouts', 'FILE');
    if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (the rollouts go in --rollouts FILE)`);
    const bins = integerFlag(args, 'bins', DEFAULT_BINS, 1);
    const sampling = samplingFromArgs(args, FULL_SAMPLING);
    const file = await loadRolloutFile(path);
    const { weights } = readCheckpointArg(ckpt);
    checkModelTakes(weights.config, file.rollouts, SEQUENCE_METHODS);
    return withGpu(io, 'drift', async ({ gpu, engine }) => {
      const model = engine.createGpuModel(gpu, weights);
      let report: DriftOutput;
      try {
        const scores = await engine.scoreRollouts(model, file.rollouts, SEQUENCE_METHODS, { rows: true });
        report = { ...driftReport(file.rollouts, logprobsOf(scores), bins), expected: expectedDrift(scores, sampling) };
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
