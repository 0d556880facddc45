// `mw score --ckpt CKPT FILE --method M [--json]`: the log-probability a checkpoint gives every
// target a replay method scores (docs/methods.md, docs/cli.md), on the GPU. Targets are listed by physical id.
// The file is read a group of rollouts at a time and each group's scores are printed as they come.

import { SEQUENCE_METHODS, type SequenceMethod } from '../plan/types';
import type { Rollout } from '../rollout/rollout';
import { byteTokenizer, getTokenizer, tokenText } from '../rollout/tokenizer';
import type { Command } from './command';
import { createScoredModel, requiredFlag, scoringMethodFlag, scoringModelArg, withGpu } from './model-args';
import { createJsonOutput, fileArgument, formatTable, openRolloutFile, rolloutGroups } from './shared';
import { reachFromArgs, WINDOW_FLAG } from './reach';

/** Tokens scored per GPU pass (whole rollouts; a longer one goes alone). */
const SCORE_GROUP_TOKENS = 1 << 16;

export interface ScoredRollout {
  method: SequenceMethod;
  targets: { id: number; logprob: number }[];
  /** Targets the method scores that need more than the model's positions (not scored), when there are any. */
  outOfReach?: number[];
  /** With --window: the targets scored on a window of their context, when there are any. */
  windowed?: number[];
}

/** A token as text: characters and word pieces quoted (so a space shows), escapes and specials as they are. */
function tokenCell(rollout: Rollout, id: number): string {
  const label = tokenText(getTokenizer(rollout.tokenizer) ?? byteTokenizer, rollout.tokens[id]);
  return /\\|^<.+>$/.test(label) ? label : `'${label}'`;
}

function scoreTable(rollout: Rollout, scored: ScoredRollout): string {
  const rows = scored.targets.map((t) => [t.id, tokenCell(rollout, t.id), t.logprob.toFixed(6)]);
  const total = scored.targets.reduce((s, t) => s + t.logprob, 0);
  const out = scored.outOfReach?.length ?? 0;
  const dropped = rollout.targets.length - scored.targets.length - out;
  const head =
    `${rollout.id}: ${scored.method}, ${scored.targets.length} targets scored` +
    (dropped ? ` (${dropped} dropped)` : '') +
    (out ? `, ${out} out of reach (need more positions than the model has)` : '') +
    (scored.windowed?.length ? `, ${scored.windowed.length} on a window` : '') +
    (scored.targets.length ? `, mean logprob ${(total / scored.targets.length).toFixed(6)}` : '');
  return `${head}\n${formatTable(['id', 'token', 'logprob'], rows)}`;
}

export const scoreCommand: Command = {
  name: 'score',
  summary: "a checkpoint's log-probability of every target a replay method scores (GPU)",
  usage: [
    'mw score --ckpt CKPT FILE --method M [--json] [--window N]',
    'mw score --ckpt MODEL-FOLDER FILE --method M [--json] [--window N]',
    'mw score --ckpt hf:ORG/NAME[@REV] FILE --method M [--json] [--window N]',
  ],
  details: [
    `M is one of ${SEQUENCE_METHODS.join(', ')} (sdcc is an objective, not a scoring).`,
    'FILE is a rollout (.json), a data set (.jsonl) or any importable format. --json prints',
    '{method, targets: [{id, logprob}]} (targets by physical id), an array in file order for JSONL.',
    'MODEL-FOLDER is a Llama / Qwen2 / Qwen3 model folder (docs/model.md); it scores rollouts of its own',
    'tokenizer (mw import --tokenizer MODEL-FOLDER). A checkpoint or folder that does not decode, or a rollout the model cannot take (its tokenizer,',
    'vocabulary), is invalid input: exit 2. No WebGPU device: exit 69.',
    "A rollout longer than the model is scored as far as it reaches: a target at a position of P (the model's positions)",
    'or more is not scored, and listed in outOfReach; --window N scores it on the last N − 1 tokens of its context and',
    'itself, at positions 0 .. N − 1, and lists it in windowed (docs/methods.md, "Long sessions").',
  ].join('\n'),
  flags: {
    ckpt: { type: 'string', value: 'CKPT', help: 'GPT-2 checkpoint (.safetensors), model folder (Llama, Qwen2, Qwen3) or hf:ORG/NAME[@REV] (docs/hub.md)' },
    method: { type: 'string', value: 'M', help: 'the replay method' },
    json: { type: 'boolean', help: 'print JSON' },
    window: WINDOW_FLAG,
  },
  async run(args, io) {
    const method = scoringMethodFlag(args);
    const ckpt = requiredFlag(args, 'ckpt', 'CKPT');
    const stream = await openRolloutFile(fileArgument(args));
    const modelArg = await scoringModelArg(ckpt, io, 'score');
    const reach = reachFromArgs(args, modelArg.positions);
    // Every rollout is validated and checked against the model (tokenizer, vocabulary) before any GPU
    // work; then scored a group at a time, as far as the model reaches, and printed.
    for await (const rollout of stream.rollouts()) modelArg.takes([rollout], [method]);
    return withGpu(io, 'score', async (session) => {
      const { engine, assertHealthy } = session;
      const model = await createScoredModel(session, modelArg, io, 'score');
      const out = createJsonOutput(io, stream.layout);
      let first = true;
      try {
        for await (const group of rolloutGroups(stream.rollouts(), (r) => r.length, SCORE_GROUP_TOKENS)) {
          const cuts = new Map<number, { outOfReach: number[]; windowed: number[] }>();
          const byRollout = (await engine.scoreRollouts(model, group, [method], { reach, onReach: (cut) => cuts.set(cut.rollout, cut) }))[method];
          await assertHealthy(); // nothing is printed from a device that reported an error
          for (const [r, logprobs] of byRollout.entries()) {
            const scored: ScoredRollout = {
              method,
              targets: [...logprobs.values()].sort((a, b) => a.id - b.id).map(({ id, logprob }) => ({ id, logprob })),
            };
            const cut = cuts.get(r);
            if (cut?.outOfReach.length) scored.outOfReach = [...cut.outOfReach].sort((a, b) => a - b);
            if (cut?.windowed.length) scored.windowed = [...cut.windowed].sort((a, b) => a - b);
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
