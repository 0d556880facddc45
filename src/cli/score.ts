// `mw score --ckpt CKPT FILE --method M [--json]`: the log-probability a checkpoint gives every
// target a replay method scores (docs/methods.md, docs/cli.md), on the GPU. Targets are listed by physical id.
// The file is read a group of rollouts at a time and each group's scores are printed as they come.

import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { byteTokenizer, getTokenizer, tokenText } from '../rollout/tokenizer';
import type { Command } from './command';
import { createScoredModel, requiredFlag, scoringMethodFlag, scoringModelArg, withGpu } from './model-args';
import { createJsonOutput, fileArgument, formatTable, openRolloutFile, rolloutGroups } from './shared';

/** Tokens scored per GPU pass (whole rollouts; a longer one goes alone). */
const SCORE_GROUP_TOKENS = 1 << 16;

export interface ScoredRollout {
  method: SequenceMethod;
  targets: { id: number; logprob: number }[];
}

/** A token as text: characters and word pieces quoted (so a space shows), escapes and specials as they are. */
function tokenCell(rollout: Rollout, id: number): string {
  const label = tokenText(getTokenizer(rollout.tokenizer) ?? byteTokenizer, rollout.tokens[id]);
  return /\\|^<.+>$/.test(label) ? label : `'${label}'`;
}

function scoreTable(rollout: Rollout, scored: ScoredRollout): string {
  const rows = scored.targets.map((t) => [t.id, tokenCell(rollout, t.id), t.logprob.toFixed(6)]);
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
  usage: [
    'mw score --ckpt CKPT FILE --method M [--json]',
    'mw score --ckpt MODEL-FOLDER FILE --method M [--json]',
    'mw score --ckpt hf:ORG/NAME[@REV] FILE --method M [--json]',
  ],
  details: [
    `M is one of ${SEQUENCE_METHODS.join(', ')} (sdcc is an objective, not a scoring).`,
    'FILE is a rollout (.json), a data set (.jsonl) or any importable format. --json prints',
    '{method, targets: [{id, logprob}]} (targets by physical id), an array in file order for JSONL.',
    'MODEL-FOLDER is a Llama / Qwen2 / Qwen3 model folder (docs/model.md); it scores rollouts of its own',
    'tokenizer (mw import --tokenizer MODEL-FOLDER). A checkpoint or folder that does not decode, or a rollout the model cannot take (vocabulary, positions), is',
    'invalid input: exit 2. No WebGPU device: exit 69.',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors), model folder (Llama, Qwen2, Qwen3) or hf:ORG/NAME[@REV] (docs/hub.md)' },
    method: { type: 'string', value: 'M', help: 'the replay method' },
    json: { type: 'boolean', help: 'print JSON' },
  },
  async run(args, io) {
    const method = scoringMethodFlag(args);
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const stream = await openRolloutFile(fileArgument(args));
    const modelArg = await scoringModelArg(ckpt, io, 'score');
    // Every rollout is validated and checked against the model (vocabulary, positions: from its
    // events, no plan built) before any GPU work; then scored a group at a time and printed.
    for await (const rollout of stream.rollouts()) modelArg.takes([rollout], [method]);
    return withGpu(io, 'score', async (session) => {
      const { engine, assertHealthy } = session;
      const model = await createScoredModel(session, modelArg, io, 'score');
      const out = createJsonOutput(io, stream.layout);
      let first = true;
      try {
        for await (const group of rolloutGroups(stream.rollouts(), (r) => r.length, SCORE_GROUP_TOKENS)) {
          const byRollout = (await engine.evaluate(model, group, [method]))[method];
          await assertHealthy(); // nothing is printed from a device that reported an error
          for (const [r, logprobs] of byRollout.entries()) {
            const scored: ScoredRollout = { method, targets: [...logprobs].sort((a, b) => a[0] - b[0]).map(([id, logprob]) => ({ id, logprob })) };
            if (args.flags.json) await out.item(async (write) => write(JSON.stringify(scored)));
            else {
              io.out(`${first ? '' : '\n'}${scoreTable(group[r], scored)}`);
              await io.drain?.();
            }
            first = false;
          }
        }
      } finally {
        model.destroy();
      }
      return () => {
        if (args.flags.json) out.finish();
        return 0;
      };
    });
  },
};
