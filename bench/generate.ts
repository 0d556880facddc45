// Rollout generation with the WGSL model: tokens/s of whole `lookup` episodes under the `compact`
// editor (default budget), default config, for three ways of using the KV cache after an edit:
//   prefix   keep the rows below the first changed position, recompute the rest (prefix caching)
//   appends  a KV cache for appended tokens only: recompute the whole live view after every edit
//   none     no KV cache: recompute the whole live view for every generated token
// Same seeds, same weights: the three produce the same rollouts (checked), so the ratio is work.
// The weights are random (GPT-2 init) with `\n` raised by 4 nats in the head, so that actions end
// after a few tokens and episodes run their turns and edits, as a trained policy's would.
// Run: node --import ./scripts/register.mjs bench/generate.ts [--quick]

import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { createDecoder, type Decoder } from '../src/gpu/generate';
import { createGpuModel, type GpuModel } from '../src/gpu/model';
import { createEditor, editorSpec } from '../src/harness/editors';
import { createLookupEnv } from '../src/harness/env/lookup';
import { runEpisode } from '../src/harness/episode';
import { verifyEpisode } from '../src/harness/verify';
import { NEWLINE } from '../src/harness/policy';
import { CACHE_REUSE, createModelPolicy, type CacheReuse, type LanguageModel } from '../src/harness/policies/model';
import { MODEL_PRESETS, describeConfig } from '../src/model/config';
import { initWeights } from '../src/model/params';
import { formatTable } from '../src/cli/shared';

const quick = process.argv.includes('--quick');
const SEEDS = Array.from({ length: quick ? 2 : 6 }, (_, i) => 100 + i);
const NONE_EPISODES = 1;
const STOP_BOOST = 4; // nats added to the `\n` logit

const config = MODEL_PRESETS.default;
const weights = initWeights(config, 1);
{
  const C = config.nEmbd;
  const wte = weights.tensors.get('wte.weight')!;
  const bias = weights.tensors.get('ln_f.bias')!;
  let norm2 = 0;
  for (let c = 0; c < C; c++) norm2 += wte[NEWLINE * C + c] ** 2;
  // The head is tied (logit_v = lnf · wte_v): this bias raises the `\n` logit by exactly STOP_BOOST.
  for (let c = 0; c < C; c++) bias[c] += (STOP_BOOST * wte[NEWLINE * C + c]) / norm2;
}

const gpu = await createGpu();
const model = createGpuModel(gpu, weights);
const editorOf = () => createEditor(editorSpec('compact'));
const env = createLookupEnv();

/** The GPU model, counting the rows its decoders compute and the extends (submits + readbacks) they issue. */
function countingModel(m: GpuModel): LanguageModel & { rows(): number; extends(): number } {
  const decoders: Decoder[] = [];
  return {
    name: 'default',
    vocabSize: m.config.vocabSize,
    nPositions: m.config.nPositions,
    createDecoder() {
      const d = createDecoder(m);
      decoders.push(d);
      return d;
    },
    rows: () => decoders.reduce((s, d) => s + d.stats.rows, 0),
    extends: () => decoders.reduce((s, d) => s + d.stats.extends, 0),
  };
}

interface Run {
  seconds: number;
  tokens: number;
  edits: number;
  rows: number;
  extends: number;
  /** The actions and the event kinds: equal in every mode. */
  events: string;
}

async function episode(reuse: CacheReuse, seed: number): Promise<Run> {
  const lm = countingModel(model);
  const started = performance.now();
  const result = await runEpisode(env, editorOf(), createModelPolicy(lm, { reuse }), seed);
  const seconds = (performance.now() - started) / 1000;
  verifyEpisode(result);
  return {
    seconds,
    tokens: result.decodes.reduce((s, d) => s + d.actTokens.length, 0),
    edits: result.K,
    rows: lm.rows(),
    extends: lm.extends(),
    events: JSON.stringify(result.rollout.events.map((e) => (e.op === 'append' && e.role === 'act' ? e.tokens : e.op))),
  };
}

const sum = (runs: Run[], f: (r: Run) => number) => runs.reduce((s, r) => s + f(r), 0);

console.log(`generate bench on ${adapterLine(gpu.info)}: ${describeConfig(config)}; lookup x compact (budget 240)`);
await episode('prefix', SEEDS[0]); // warm-up: pipelines compiled, not timed
// Modes interleaved episode by episode, so that load on the machine falls on all of them alike;
// `none` (a full forward per token) only on the first NONE_EPISODES episodes.
const runs = new Map<CacheReuse, Run[]>(CACHE_REUSE.map((r) => [r, []]));
for (const [i, seed] of SEEDS.entries()) {
  for (const reuse of CACHE_REUSE) {
    if (reuse === 'none' && i >= NONE_EPISODES) continue;
    const run = await episode(reuse, seed);
    if (reuse !== 'prefix' && run.events !== runs.get('prefix')![i].events) {
      throw new Error(`seed ${seed}: reuse ${reuse} generated other actions than prefix: the cache changed the model`);
    }
    runs.get(reuse)!.push(run);
  }
}
const prefix = runs.get('prefix')!;
console.log(
  `${sum(prefix, (r) => r.tokens)} tokens generated in ${SEEDS.length} episodes, ${sum(prefix, (r) => r.edits)} edits; identical rollouts in every mode\n`,
);
console.log(
  formatTable(
    ['cache reuse', 'episodes', 'tokens', 'seconds', 'tokens/s', 'rows computed', 'rows/token', 'submits', 'prefix speedup'],
    CACHE_REUSE.map((reuse) => {
      const mine = runs.get(reuse)!;
      const tokens = sum(mine, (r) => r.tokens);
      const seconds = sum(mine, (r) => r.seconds);
      // Against prefix reuse on the same episodes.
      const prefixSeconds = sum(prefix.slice(0, mine.length), (r) => r.seconds);
      return [
        reuse,
        mine.length,
        tokens,
        Number(seconds.toFixed(2)),
        Number((tokens / seconds).toFixed(1)),
        sum(mine, (r) => r.rows),
        Number((sum(mine, (r) => r.rows) / tokens).toFixed(2)),
        sum(mine, (r) => r.extends),
        `${(seconds / prefixSeconds).toFixed(2)}x`,
      ];
    }),
  ),
);
model.destroy();
gpu.destroy();
