// `mw score --ckpt CKPT FILE --method M [--json]`: the log-probability a checkpoint gives every
// target a replay method scores (docs/methods.md, docs/cli.md), on the GPU. Targets are listed by physical id.

import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { byteTokenizer, getTokenizer } from '../rollout/tokenizer';
import type { Command } from './command';
import { checkModelTakes, readCheckpointArg, requiredFlag, scoringMethodFlag, withGpu } from './model-args';
import { fileArgument, formatTable, loadRolloutFile, perFile, printJson } from './shared';

export interface ScoredRollout {
  method: SequenceMethod;
  targets: { id: number; logprob: number }[];
}

/** A token as text: printable characters quoted (so a space shows), escapes and specials as they are. */
function tokenText(rollout: Rollout, id: number): string {
  const label = (getTokenizer(rollout.tokenizer) ?? byteTokenizer).label(rollout.tokens[id]);
  return label.length === 1 ? `'${label}'` : label;
}

function scoreTable(rollout: Rollout, scored: ScoredRollout): string {
  const rows = scored.targets.map((t) => [t.id, tokenText(rollout, t.id), t.logprob.toFixed(6)]);
  const total = scored.targets.reduce((s, t) => s + t.logprob, 0);
  const dropped = rollout.targets.length - scored.targets.length;
  const head =
    `${rollout.id}: ${scored.method}, ${scored.targets.length} targets scored` +
    (dropped ? ` (${dropped} dropped)` : '') +
    (scored.targets.length ? `, mean logprob ${(total / scored.targets.length).toFixed(6)}` : '');
  return `${head}\n${formatTable(['id', 'token', 'logprob'], rows)}`;
}

export const scoreCommand: Command = {
  name: 'score',
  summary: "a checkpoint's log-probability of every target a replay method scores (GPU)",
  usage: ['mw score --ckpt CKPT FILE --method M [--json]'],
  details: [
    `M is one of ${SEQUENCE_METHODS.join(', ')} (sdcc is an objective, not a scoring).`,
    'FILE is a rollout (.json), a data set (.jsonl) or any importable format. --json prints',
    '{method, targets: [{id, logprob}]} (targets by physical id), an array in file order for JSONL.',
    'A checkpoint that does not decode, or a rollout the model cannot take (vocabulary, positions), is',
    'invalid input: exit 2. No WebGPU device: exit 69.',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors)' },
    method: { type: 'string', value: 'M', help: 'the replay method' },
    json: { type: 'boolean', help: 'print JSON' },
  },
  async run(args, io) {
    const method = scoringMethodFlag(args);
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const file = await loadRolloutFile(fileArgument(args));
    const { weights } = readCheckpointArg(ckpt);
    checkModelTakes(weights.config, file.rollouts, [method]);
    return withGpu(io, 'score', async ({ gpu, engine }) => {
      const model = engine.createGpuModel(gpu, weights);
      let scored: ScoredRollout[];
      try {
        const byRollout = (await engine.evaluate(model, file.rollouts, [method]))[method];
        scored = byRollout.map((logprobs) => ({
          method,
          targets: [...logprobs].sort((a, b) => a[0] - b[0]).map(([id, logprob]) => ({ id, logprob })),
        }));
      } finally {
        model.destroy();
      }
      return () => {
        if (args.flags.json) printJson(io, perFile(file, scored));
        else io.out(scored.map((s, i) => scoreTable(file.rollouts[i], s)).join('\n'));
        return 0;
      };
    });
  },
};
