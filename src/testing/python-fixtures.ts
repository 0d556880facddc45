// What the Python tier (python/tests) needs from the TypeScript side besides `mw`: a seeded random
// GPT-2 checkpoint and generated rollouts with edits (every target with a rollout logprob, rewards
// and groups, so SFT, RL and SDCC all apply), and the float64 objectives of src/objectives on given
// logits. Run: node --import ./scripts/register.mjs src/testing/python-fixtures.ts fixtures DIR
//          node --import ./scripts/register.mjs src/testing/python-fixtures.ts objectives < cases.json

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { saveCheckpoint } from '../model/checkpoint';
import { MODEL_PRESETS } from '../model/config';
import { grpoAdvantages } from '../objectives/grpo';
import { sdccKl, sdccObjective } from '../gpu/kernels/kl-sdcc/kl-sdcc.reference';
import type { ObjectiveTarget, TokenObjective } from '../objectives/tokens';
import { tokenObjective } from '../gpu/kernels/loss-grad/loss-grad.reference';
import type { RolloutJson } from '../rollout/format';
import { generateRandomRollout } from '../rollout/generate-random';
import { createRng } from '../util/prng';
import { randomWeights } from '../model/random-weights';

/** Seeds of the generated set: small rollouts (≤ 64 tokens), most with edits and diverging leaves. */
export const FIXTURE_SEEDS = [901, 902, 903, 905, 908, 911, 913, 917];

/** A generated rollout where every act event carries logprobs, with a reward and a group (two groups). */
export function fixtureRollout(seed: number, index: number): RolloutJson {
  const rollout = generateRandomRollout({ seed, size: 'small', id: `gen-${seed}`, edits: 1 + (index % 3) });
  const rng = createRng(seed ^ 0xbeef);
  for (const event of rollout.events) {
    if (event.op !== 'append' || event.role !== 'act' || event.logprobs) continue;
    const count = event.tokens ? event.tokens.length : 1 + new TextEncoder().encode(event.text).length;
    event.logprobs = Array.from({ length: count }, () => -0.05 - 4 * rng.next());
  }
  rollout.reward = index % 3 === 0 ? 1 : index % 3 === 1 ? 0 : 0.5;
  rollout.group = `g${index % 2}`;
  return rollout;
}

/** DIR/ckpt.safetensors (tiny, wide random weights, seed 7), DIR/rollouts.jsonl and one DIR/<id>.json per rollout. */
export function writeFixtures(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'ckpt.safetensors'), saveCheckpoint(randomWeights(MODEL_PRESETS.tiny, 7)));
  const rollouts = FIXTURE_SEEDS.map(fixtureRollout);
  writeFileSync(join(dir, 'rollouts.jsonl'), rollouts.map((r) => JSON.stringify(r)).join('\n') + '\n');
  for (const r of rollouts) writeFileSync(join(dir, `${r.id}.json`), JSON.stringify(r));
}

/** One objective case: logits (N, V) row-major, the targets, and for SDCC the KL pairs and λ. */
interface ObjectiveCase {
  N: number;
  V: number;
  logits: number[];
  targets: ObjectiveTarget[];
  objective: TokenObjective;
  /** SDCC: pairs on the same logits (student and teacher rows of one forward), and λ. */
  sdcc?: { pairs: { studentRow: number; teacherRow: number }[]; lambda: number };
}

/** The float64 reference of each case: the loss and d loss / d logits. */
export function evaluateObjectives(cases: ObjectiveCase[]): { loss: number; dLogits: number[] }[] {
  return cases.map((c) => {
    const task = tokenObjective(c.logits, c.N, c.V, c.targets, c.objective);
    if (!c.sdcc) return { loss: task.loss, dLogits: Array.from(task.dLogits) };
    const kl = sdccKl(c.logits, c.N, c.logits, c.N, c.V, c.sdcc.pairs);
    const total = sdccObjective(task, kl, c.sdcc.lambda);
    return { loss: total.loss, dLogits: Array.from(total.dLogits) };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, dir] = process.argv.slice(2);
  if (command === 'fixtures' && dir) writeFixtures(dir);
  else if (command === 'objectives') {
    const input = JSON.parse(readFileSync(0, 'utf8')) as { cases: ObjectiveCase[]; advantages?: { rewards: number[]; groups: (string | null)[] } };
    const out = {
      results: evaluateObjectives(input.cases),
      advantages: input.advantages ? Array.from(grpoAdvantages(input.advantages.rewards, input.advantages.groups)) : null,
    };
    process.stdout.write(JSON.stringify(out));
  } else {
    process.stderr.write('usage: python-fixtures.ts fixtures DIR | objectives < cases.json\n');
    process.exit(1);
  }
}
