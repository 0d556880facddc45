// `mw drift --ckpt CKPT --rollouts FILE [--json]`: the drift (docs/metrics.md) of every replay method under a
// checkpoint: logdiff and μ against the rollout's own logprobs, conditioning drift against the exact
// live-prefix score (logit-tree's), the sign split and the distribution of the signed differences.

import { describeSampling, FULL_SAMPLING } from '../harness/policies/model';
import { DEFAULT_BINS, LIVE, SIGN_EPSILON, createDriftAccumulator, logprobsOf, type DriftReport, type SignSplit } from '../metrics/drift-report';
import { expectedDriftReport, expectedTargetDrifts, type ExpectedDriftReport } from '../metrics/expected-drift';
import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { UsageError, type Command } from './command';
import { createScoredModel, integerFlag, requiredFlag, samplingFlags, samplingFromArgs, scoringModelArg, withGpu } from './model-args';
import { createProgress, duration } from '../present/progress';
import { formatEffect, formatMagnitude } from '../present/number';
import { driftVerdict, FLOOR_FACTOR, type DriftVerdict } from '../metrics/verdict';
import { byCost, editorSums, rolloutJunctions, type EditorSum, type Junction } from '../metrics/junctions';
import { loadTokenizer, tokenText } from '../rollout/tokenizer';
import { formatTable, openRolloutFile, printJson, rolloutGroups } from './shared';
import type { ScoreOptions, ScoreProgress } from '../gpu/score';
import { buildPlan } from '../plan/build';
import { deriveTree } from '../tree/derive';
import { reachPlan, type Reach } from '../plan/reach';
import { reachFromArgs, WINDOW_FLAG } from './reach';
import { createReachTally, reachLines, type ReachReport } from '../metrics/reach';

/** Floats of (target, V) rows held per GPU pass, all methods together (whole rollouts; a larger one goes alone). */
const DRIFT_GROUP_FLOATS = 1 << 24;

/**
 * `mw drift --json`: the figures of docs/metrics.md per method, the drift the sampler should expect, and the
 * verdict against each reference (`rollout` null when no target has a rollout logprob).
 */
export type DriftOutput = DriftReport & {
  expected: ExpectedDriftReport;
  verdict: { rollout: DriftVerdict | null; conditioning: DriftVerdict };
  /** Drift per edit of every rollout (docs/metrics.md, "Drift per edit"), the costliest first. */
  junctions: Junction[];
  /** The junctions summed per editor (the memory editor or harness that made the edits), the costliest first. */
  byEditor: EditorSum[];
  /** How far the model reached: per method the targets beyond its positions (not scored) or scored on a window. */
  reach: ReachReport;
};

/** Edits the text table lists (--json has them all). */
const JUNCTION_ROWS = 5;

function junctionText(junctions: readonly Junction[]): string {
  if (!junctions.length) return 'no edit: no drift per edit';
  const rows = junctions.slice(0, JUNCTION_ROWS).map((j) => {
    const top = SEQUENCE_METHODS.flatMap((m) => j.methods[m].largest.slice(0, 1).map((t) => ({ m, t }))).sort(
      (a, b) => Math.abs(b.t.drift) - Math.abs(a.t.drift),
    )[0];
    return [
      `${j.rollout} edit ${j.edit}`,
      `-${j.evicted} +${j.inserted}`,
      `${j.targets.before.length}+${j.targets.after.length}`,
      formatMagnitude(j.cost),
      ...SEQUENCE_METHODS.map((m) => (j.methods[m].mu === null ? '-' : formatEffect(j.methods[m].mu!))),
      top ? `${top.m} ${formatEffect(top.t.drift)} at ${top.t.id} ${JSON.stringify(top.t.token)}` : '-',
    ];
  });
  return (
    `drift per edit (the costliest ${Math.min(JUNCTION_ROWS, junctions.length)} of ${junctions.length}; mu against ${LIVE} on the targets the edit makes diverge: ` +
    'before it whose live prefix loses ids to it + of the segment it opens; cost = the largest Σ|diff| of any method)\n' +
    formatTable(['edit', 'ids', 'targets', 'cost', ...SEQUENCE_METHODS.map((m) => `${m} mu`), 'largest'], rows)
  );
}

function editorText(sums: readonly EditorSum[]): string {
  if (!sums.length) return '';
  const rows = sums.map((e) => [
    e.editor,
    e.rollouts,
    e.edits,
    e.targets,
    formatMagnitude(e.cost),
    ...SEQUENCE_METHODS.map((m) => (e.methods[m].n ? `${formatEffect(e.methods[m].sum)} / ${e.methods[m].n}` : '-')),
  ]);
  return (
    `\ndrift per editor (the edits of each memory editor or harness summed over the set: Σ (ℓ_m − ℓ_live) over n targets; ` +
    "a target two edits make diverge counts for each; cost = Σ of the edits' costs)\n" +
    formatTable(['editor', 'rollouts', 'edits', 'targets', 'cost', ...SEQUENCE_METHODS.map((m) => `${m} sum / n`)], rows)
  );
}

/** The verdicts of a report: against the rollout's logprobs (when it has any) and against the live prefix. */
export function reportVerdicts(report: DriftReport): DriftOutput['verdict'] {
  const methods = SEQUENCE_METHODS.map((method) => ({ method, m: report.methods[method] }));
  const format = (x: number) => formatEffect(x);
  return {
    rollout: report.withLogprobs
      ? driftVerdict(
          methods.map(({ method, m }) => ({ method, n: m.n, logdiff: m.logdiff, mu: m.mu })),
          'rollout',
          { format },
        )
      : null,
    conditioning: driftVerdict(
      methods.map(({ method, m }) => ({ method, n: m.conditioningDrift === null ? 0 : m.scored, logdiff: m.conditioningDrift, mu: m.conditioningMu })),
      'live',
      { format },
    ),
  };
}

function verdictText(v: DriftVerdict): string {
  const against = v.reference === 'rollout' ? "the rollout's logprobs" : `the live prefix (${LIVE})`;
  const rows = v.methods.map((m) => [
    m.method,
    m.state === 'at-floor' ? 'at the floor' : m.state === 'not-scored' ? '-' : m.state === 'below' ? 'below zero' : 'above zero',
    m.floors === null ? '-' : formatMagnitude(m.floors),
    m.meaning,
  ]);
  return (
    `verdict against ${against}: floor ${formatMagnitude(v.floor)} nats (the exact methods' logdiff, at least 1e-6); |mu| within ${FLOOR_FACTOR} floors reads "at the floor"\n` +
    `${formatTable(['method', 'verdict', 'floors', 'what it means'], rows)}\n${v.conclusion}`
  );
}

function driftTable(report: DriftOutput): string {
  const num = (v: number | null) => (v === null ? '-' : formatMagnitude(v));
  const signed = (v: number | null) => (v === null ? '-' : formatEffect(v));
  const share = (s: SignSplit) => (s.negativeShare === null ? '-' : `${Math.round(100 * s.negativeShare)}% of ${s.diverging}`);
  const rows = SEQUENCE_METHODS.map((method) => {
    const m = report.methods[method];
    const e = report.expected.methods[method]!;
    return [
      method,
      m.scored,
      m.n,
      num(m.logdiff),
      signed(m.mu),
      share(m.sign.rollout),
      num(m.conditioningDrift),
      signed(m.conditioningMu),
      share(m.sign.conditioning),
      signed(e.mu),
      share(e.sign),
    ];
  });
  const head =
    `${report.rollouts} rollout${report.rollouts === 1 ? '' : 's'}, ${report.targets} targets, ${report.withLogprobs} with rollout logprobs; ` +
    `conditioning drift against ${LIVE} (exact live prefix); negative = share of |diff| > ${SIGN_EPSILON} below zero; ` +
    `expected mu = the signed drift a ${describeSampling(report.expected.sampling)} sampler should expect at each target (exact, no sampling noise)`;
  const verl = SEQUENCE_METHODS.map((method) => {
    const f = report.methods[method].rollout_corr;
    return [method, ...ROLLOUT_CORR_COLUMNS.map((name) => (f ? num(f[name]) : '-'))];
  });
  return (
    `${head}\n${formatTable(['method', 'scored', 'n', 'logdiff', 'mu', 'negative', 'cond drift', 'cond mu', 'cond negative', 'expected mu', 'exp negative'], rows)}\n` +
    `verl's rollout_corr/* against the rollout logprobs (a sequence per rollout; slime's train_rollout_logprob_abs_diff is logdiff)\n` +
    `${formatTable(['method', ...ROLLOUT_CORR_COLUMNS], verl)}\n` +
    reachLines(report.reach)
      .map((line) => `${line}\n`)
      .join('') +
    [report.verdict.rollout, report.verdict.conditioning].flatMap((v) => (v ? [verdictText(v)] : [])).join('\n') +
    `\n${junctionText(report.junctions)}${editorText(report.byEditor)}`
  );
}

/** The verl figures the table shows (--json has them all). */
const ROLLOUT_CORR_COLUMNS = ['kl', 'k3_kl', 'log_ppl_diff', 'log_ppl_abs_diff', 'ppl_ratio', 'chi2_token', 'chi2_seq', 'rollout_is_eff_sample_size'] as const;

/** Rows the scoring methods feed the model for these rollouts within `reach` (what progress counts). */
function groupTokens(rollouts: readonly Rollout[], reach: Reach): number {
  let n = 0;
  for (const r of rollouts) {
    const tree = deriveTree(r);
    for (const m of SEQUENCE_METHODS) for (const s of reachPlan(buildPlan(tree, m), reach).plan.sequences) n += s.ids.length;
  }
  return n;
}

export const driftCommand: Command = {
  name: 'drift',
  summary: 'train-inference and conditioning drift of every replay method under a checkpoint (GPU)',
  usage: ['mw drift --ckpt CKPT|MODEL-FOLDER --rollouts FILE [--json] [--window N] [--bins N] [--temperature T] [--top-k K] [--top-p P] [--progress]'],
  details: [
    'Per method (docs/metrics.md): logdiff = mean |ℓ_m − ℓ_rollout| and μ = mean (ℓ_m − ℓ_rollout) over the targets',
    'it scores that have rollout logprobs (n of them; null when none); conditioningDrift and conditioningMu',
    `the same against ${LIVE}'s score (each target under its exact live prefix) over every scored target.`,
    `sign: of the targets whose |difference| exceeds ${SIGN_EPSILON}, how many, and the share below zero`,
    '(naive-compressed leaks later summaries: mostly negative; naive-full sees stale context: mostly positive).',
    'histogram: the signed differences in N bins (default 20) over one symmetric range shared by all methods.',
    'expected: per method, the signed drift a sampler (--temperature/--top-k/--top-p, default temperature 1) should',
    "expect at each target, Σ_a s(a)(log q_m(a) − log p(a)) with p the live-prefix distribution, s the sampler's and",
    "q_m the method's: exact, where μ averages one sample per target. At temperature 1 it is −KL(p ‖ q_m) ≤ 0 for every",
    "method: only a sampler sharper than p can make a replay's expected drift positive.",
    "rollout_corr: verl's train–rollout mismatch figures per method (logged there as rollout_corr/<name>), a sequence",
    'per rollout: kl and k3_kl (KL(π_rollout ‖ π_method) estimators), log_ppl_diff / _abs_diff / _max / _min and',
    'ppl_ratio (per-rollout log-perplexity gaps), chi2_token and chi2_seq (χ² of the importance weights),',
    "rollout_is_eff_sample_size, training_ppl, rollout_ppl, and slime's train_rollout_logprob_abs_diff (= logdiff).",
    'FILE is any importable format; the figures pool every rollout in it. Progress (tokens scored of the total,',
    'ETA) goes to stderr when it is a terminal, or with --progress.',
    "A rollout longer than the model is scored as far as it reaches: a target whose position (its context's",
    "length) is the model's positions P or more is not scored, and reach counts them per method. --window N scores",
    'those on the last N − 1 tokens of their own context and themselves, at positions 0 .. N − 1 (docs/methods.md).',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors), model folder (Llama, Qwen2, Qwen3) or hf:ORG/NAME[@REV] (docs/hub.md)' },
    rollouts: { type: 'string', value: 'FILE', help: 'rollouts (.json, .jsonl or any importable format)' },
    bins: { type: 'string', value: 'N', help: `histogram bins (default ${DEFAULT_BINS})` },
    window: WINDOW_FLAG,
    json: { type: 'boolean', help: 'print JSON' },
    progress: { type: 'boolean', help: 'report progress on stderr even when it is not a terminal' },
    ...samplingFlags('expected drift: ', FULL_SAMPLING),
  },
  async run(args, io) {
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const path = requiredFlag(args, 'rollouts', 'FILE');
    if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}" (the rollouts go in --rollouts FILE)`);
    const bins = integerFlag(args, 'bins', DEFAULT_BINS, 1);
    const sampling = samplingFromArgs(args, FULL_SAMPLING);
    const stream = await openRolloutFile(path);
    const modelArg = await scoringModelArg(ckpt, io, 'drift');
    const reach = reachFromArgs(args, modelArg.positions);
    // Validated and checked against the model first (no plan built), then scored a group at a
    // time: a group leaves its signed differences behind, its (targets, V) rows are dropped.
    // With progress on, the pre-pass also counts the rows every method will score (its plans' lengths).
    const counting = !!process.stderr.isTTY || !!args.flags.progress;
    let total = 0;
    for await (const rollout of stream.rollouts()) {
      modelArg.takes([rollout], SEQUENCE_METHODS);
      if (counting) total += groupTokens([rollout], reach);
    }
    return withGpu(io, 'drift', async (session) => {
      const { engine } = session;
      const model = await createScoredModel(session, modelArg, io, 'drift');
      let report: DriftOutput;
      try {
        // Shown when stderr is a terminal or when asked (--progress), so a script's stderr holds only its one-line errors otherwise.
        const tty = !!process.stderr.isTTY;
        const progress = tty || args.flags.progress ? createProgress((text) => io.err(text), { tty }) : undefined;
        let done = 0; // rows of the groups scored so far
        let groupRows = 0;
        const onProgress =
          progress &&
          ((p: ScoreProgress) => {
            groupRows = p.total;
            progress(done + p.tokens, total, ({ done: scored, total: all, elapsed, rate, eta }) =>
              scored >= all
                ? `mw drift: ${scored}/${all} tokens scored in ${duration(elapsed)}, ${rate.toFixed(0)} tokens/s`
                : `mw drift: ${scored}/${all} tokens scored (${p.method}), ${rate.toFixed(0)} tokens/s, ETA ${eta}`,
            );
          });
        const drift = createDriftAccumulator();
        const reached = createReachTally(reach);
        const junctions: Junction[] = [];
        let rolloutIndex = 0;
        const expected: Partial<Record<SequenceMethod, number[]>> = {};
        const rowsPerTarget = SEQUENCE_METHODS.length * modelArg.config.vocabSize;
        for await (const group of rolloutGroups(stream.rollouts(), (r) => r.targets.length * rowsPerTarget, DRIFT_GROUP_FLOATS)) {
          const cuts: Parameters<NonNullable<ScoreOptions['onReach']>>[0][] = [];
          const scores = await engine.scoreRollouts(model, group, SEQUENCE_METHODS, { rows: true, onProgress, reach, onReach: (cut) => cuts.push(cut) });
          for (const cut of cuts) reached.add(cut.method, scores[cut.method][cut.rollout].size, cut);
          done += groupRows;
          const logprobs = logprobsOf(scores);
          for (const [r, rollout] of group.entries()) {
            const byMethod = Object.fromEntries(SEQUENCE_METHODS.map((m) => [m, logprobs[m][r]])) as Record<SequenceMethod, Map<number, number>>;
            drift.add(rollout, byMethod);
            const tokenizer = await loadTokenizer(rollout.tokenizer);
            const text = (token: number) => tokenText(tokenizer, token);
            for (const j of rolloutJunctions(deriveTree(rollout), byMethod, { text, rolloutIndex })) junctions.push(j);
            rolloutIndex++;
          }
          for (const [method, values] of Object.entries(expectedTargetDrifts(scores, sampling)) as [SequenceMethod, number[]][]) {
            const list = (expected[method] ??= []);
            for (const v of values) list.push(v);
          }
        }
        const figures = drift.report(bins);
        report = {
          ...figures,
          expected: expectedDriftReport(expected, sampling),
          verdict: reportVerdicts(figures),
          junctions: byCost(junctions),
          byEditor: editorSums(junctions),
          reach: reached.report(),
        };
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
