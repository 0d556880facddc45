// `mw drift --ckpt CKPT --rollouts FILE [--json]`: SPEC §5's drift of every replay method under a
// checkpoint: logdiff and μ against the rollout's own logprobs, conditioning drift against the exact
// live-prefix score (logit-tree's), the sign split and the distribution of the signed differences.

import { DEFAULT_BINS, LIVE, SIGN_EPSILON, driftReport, type DriftReport, type SignSplit } from '../metrics/drift-report';
import { UsageError, type Command } from './command';
import { checkModelTakes, integerFlag, readCheckpointArg, requiredFlag, SCORING_METHODS, withGpu } from './model-args';
import { formatTable, loadRolloutFile, printJson } from './shared';

// The computation lives in src/metrics/drift-report.ts (mw experiment matrix shares it).
export { DEFAULT_BINS, SIGN_EPSILON, driftReport, type DriftReport, type MethodDrift, type SignSplit } from '../metrics/drift-report';

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
