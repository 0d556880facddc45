// GPT-2 124M on the workbench's engine (issue 22): a gpt2-124M-shaped random checkpoint written in
// the published layout (nothing downloaded) and loaded as a user's file, a 1,024-token gpt2 rollout
// scored (forward + log-softmax gather), in Node (Dawn) and in Chromium (the page bench/gpt2-page,
// built with Vite, fetching the file and tokenizing in a Web Worker). Prints forward tokens/s and
// the GPU buffers: the weights, and the peak of a scoring run beyond them, by owner.
//   node --import ./scripts/register.mjs bench/gpt2.ts [--runs N] [--node-only] [--browser-only]
// On SwiftShader (a CPU) a run takes minutes; compare the two runtimes, not absolute times.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { pickMatmulVariant } from '../src/gpu/kernels/matmul/matmul-autotune';
import { loadCheckpoint } from '../src/model/checkpoint';
import { describeConfig } from '../src/model/config';
import { initWeights, parameterCount } from '../src/model/params';
import { gpt2Tokenizer } from '../src/rollout/gpt2';
import { publishedGpt2Checkpoint } from '../src/testing/publishedGpt2';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import { GPT2_124M, PROSE, gpt2Rollout, mb, measureGpt2, type Gpt2Figures } from './_gpt2';
import { serve } from './_serve';

const args = process.argv.slice(2);
const RUNS = Number(args.includes('--runs') ? args[args.indexOf('--runs') + 1] : '1');
const NODE = !args.includes('--browser-only');
const BROWSER = !args.includes('--node-only');

function report(where: string, f: Gpt2Figures): void {
  console.log(`\n${where}: adapter binds ${mb(f.adapter.maxStorageBufferBindingSize)}, buffers up to ${mb(f.adapter.maxBufferSize)}`);
  console.log(`  weights on the GPU: ${mb(f.weightBytes)}`);
  console.log(
    `  scoring 1,024 tokens (${f.targets} targets): ${f.seconds.map((s) => `${s.toFixed(1)} s`).join(', ')} -> ${f.tokensPerSecond.toFixed(1)} tokens/s`,
  );
  const large = Object.entries(f.peakByOwner).filter(([, b]) => b >= 1e6);
  const small = Object.values(f.peakByOwner).reduce((n, b) => n + (b < 1e6 ? b : 0), 0);
  const parts = [...large.map(([who, b]) => `${who} ${mb(b)}`), `smaller buffers ${mb(small)}`];
  console.log(`  peak beyond the weights: ${mb(f.peakBeyondWeights)} (${parts.join(', ')})`);
}

let started = performance.now();
const weights = initWeights(GPT2_124M, 1);
const bytes = publishedGpt2Checkpoint(weights);
const loaded = loadCheckpoint(bytes);
console.log(
  `gpt2 bench: ${describeConfig(loaded.config)}, ${(parameterCount(loaded.config) / 1e6).toFixed(1)}M parameters; published-layout file of ${mb(bytes.length)} (no config metadata, attn.bias buffers, no lm_head) written and loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
console.log(`load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores; ${RUNS} timed run(s) after a 64-token warm-up`);
const tokens = gpt2Tokenizer.encode(PROSE.repeat(24));
const rollout = gpt2Rollout(tokens);
const warmup = gpt2Rollout(tokens, 64);
const results: Record<string, Gpt2Figures> = {};

if (NODE) {
  const gpu = await createGpu();
  await pickMatmulVariant(gpu);
  console.log(`\nNode (Dawn) on ${adapterLine(gpu.info)}`);
  results.node = await measureGpt2(gpu, loaded, warmup, rollout, RUNS, (line) => console.log(`  ${line}`));
  gpu.destroy();
  report('Node', results.node);
}

if (BROWSER) {
  const out = mkdtempSync(join(tmpdir(), 'mw-bench-gpt2-'));
  try {
    const built = spawnSync('npx', ['vite', 'build', '--config', 'vite.config.ts', '--logLevel', 'warn', '--outDir', out, '--emptyOutDir', 'bench/gpt2-page'], {
      stdio: 'inherit',
    });
    if (built.status !== 0) throw new Error('vite build of bench/gpt2-page failed');
    writeFileSync(join(out, 'gpt2.safetensors'), bytes);
    const { server, url } = await serve(out);
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      page.on('console', (m) => console.log(`  page: ${m.text()}`));
      started = performance.now();
      await page.goto(`${url}?runs=${RUNS}`);
      await page.waitForFunction(() => window.__gpt2 !== undefined, undefined, { timeout: 0, polling: 1000 });
      const result = await page.evaluate(() => window.__gpt2!);
      if (result.error) throw new Error(`Chromium: ${result.error}`);
      results.chromium = result.figures!;
      report('Chromium', results.chromium);
    } finally {
      await browser.close();
      server.close();
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (results.node && results.chromium) {
  console.log(`\nChromium / Node tokens/s: ${(results.chromium.tokensPerSecond / results.node.tokensPerSecond).toFixed(2)}`);
}
