// Open models on the workbench's engine (issue 28): SmolLM2-135M- and Qwen3-0.6B-shaped random bf16 folders
// written in the published layout (config.json as published, generation_config.json, one model.safetensors,
// tensors sorted by name; nothing downloaded, no tokenizer: token-level rollouts need none) into a temporary
// folder, loaded tensor by tensor and scored (a rollout with two edits, logit-tree) in Node (Dawn) and in
// Chromium (the page bench/open-models-page fetches each folder as a user would drop it). Prints the GPU
// bytes of the weights against the file, the peak beyond them, load time and forward tokens/s. Then, in the
// same Chromium, each folder cut to its first --ort-layers layers (the same tensors) scores one causal
// sequence in this project's WGSL and in onnxruntime-web (WebGPU, WASM) from the ONNX file the Python tier's
// torch exports (bench/_onnx_export.py, float32), with the ratios and the largest log-probability difference.
//   node --import ./scripts/register.mjs bench/open-models.ts [--models smollm2-135m,qwen3-0.6b]
//     [--tokens smollm2-135m=128,qwen3-0.6b=48] [--runs N] [--ort-layers 2] [--ort-tokens 64] [--no-ort] [--node-only] [--browser-only]
// On SwiftShader (a CPU, shared) a 4,096-token rollout of these models takes far longer than a bench run
// should (measured: 2.1 and 0.3 tokens/s in Node under load 18, see the README row): the default rollouts
// are 128 and 48 tokens, and what was measured is printed. The torch export alone takes minutes there.
import { spawnSync } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { adapterLine, createGpu } from '../src/gpu/runtime/device';
import { describeFamilyConfig, familyParameters, parseFamilyConfig, type FamilyConfig } from '../src/model/family/config';
import { openModelFolderPath } from '../src/model/family/folder-node';
import { safetensorsHeader } from '../src/util/safetensors';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import { editedRollout, mb, measureOpenModel, OPEN_MODELS, tensorBytes, type OpenModelFigures, type OpenModelName } from './_open-models';
import type { OrtFigures } from './open-models-page/main';
import { serve } from './_serve';

const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const MODELS = arg('--models', 'smollm2-135m,qwen3-0.6b').split(',') as OpenModelName[];
const DEFAULT_TOKENS: Record<OpenModelName, number> = { 'smollm2-135m': 128, 'qwen3-0.6b': 48 };
const TOKENS: Record<string, number> = { ...DEFAULT_TOKENS };
for (const pair of arg('--tokens', '').split(',').filter(Boolean)) {
  const [name, n] = pair.split('=');
  TOKENS[name] = Number(n);
}
const RUNS = Number(arg('--runs', '1'));
/** Tokens of the warm-up rollout (pipelines compile): short, the models are slow on SwiftShader. */
const WARMUP = 24;
const ORT_LAYERS = Number(arg('--ort-layers', '2'));
const ORT_TOKENS = Number(arg('--ort-tokens', '64'));
const ORT = !args.includes('--no-ort');
const NODE = !args.includes('--browser-only');
const BROWSER = !args.includes('--node-only');
for (const name of MODELS) if (!(name in OPEN_MODELS)) throw new Error(`--models: ${name} is not one of ${Object.keys(OPEN_MODELS).join(', ')}`);

/** Writes the folder of `name` (cut to `layers` when given) under `dir`; its file list goes to files.json for the page. */
function writeFolder(dir: string, name: OpenModelName, layers?: number): FamilyConfig {
  mkdirSync(dir, { recursive: true });
  const json = { ...OPEN_MODELS[name], ...(layers === undefined ? {} : { num_hidden_layers: layers }) };
  const config = parseFamilyConfig(json, name);
  const write = (file: string, value: unknown) => writeFileSync(join(dir, file), `${JSON.stringify(value, null, 2)}\n`);
  write('config.json', json);
  write('generation_config.json', { bos_token_id: json.bos_token_id, eos_token_id: json.eos_token_id, transformers_version: json.transformers_version });
  const specs = familyParameters(config)
    .map((p) => ({ name: p.name, dtype: 'BF16' as const, shape: p.shape }))
    .sort((a, b) => (a.name < b.name ? -1 : 1)); // safetensors writers sort names
  const fd = openSync(join(dir, 'model.safetensors'), 'w');
  try {
    writeSync(fd, safetensorsHeader(specs, { format: 'pt' }));
    for (const spec of specs) {
      for (const chunk of tensorBytes(
        spec.name,
        spec.shape.reduce((a, b) => a * b, 1),
        json.initializer_range,
      ))
        writeSync(fd, chunk);
    }
  } finally {
    closeSync(fd);
  }
  write('files.json', ['config.json', 'generation_config.json', 'model.safetensors']);
  return config;
}

function report(where: string, name: string, f: OpenModelFigures): void {
  const ratio = f.weightBytes / f.fileBytes;
  console.log(
    `\n${where}, ${name}: adapter binds ${mb(f.adapter.maxStorageBufferBindingSize)}, buffers up to ${mb(f.adapter.maxBufferSize)}, shader-f16 ${f.adapter.shaderF16 ? 'yes' : 'no'}`,
  );
  console.log(`  weights on the GPU: ${mb(f.weightBytes)} for ${mb(f.fileBytes)} of tensors (${ratio.toFixed(4)} × the file; bound 1.1)`);
  if (ratio > 1.1) throw new Error(`${where}, ${name}: the weights take ${ratio.toFixed(3)} × their file on the GPU, above 1.1`);
  console.log(`  load: ${f.loadSeconds.toFixed(1)} s`);
  console.log(
    `  scoring a ${f.tokens}-token rollout with two edits (${f.targets} targets, ${f.layers} layers): ${f.seconds.map((s) => `${s.toFixed(1)} s`).join(', ')} -> ${f.tokensPerSecond.toFixed(2)} tokens/s`,
  );
  const large = Object.entries(f.peakByOwner).filter(([, b]) => b >= 1e6);
  const small = Object.values(f.peakByOwner).reduce((n, b) => n + (b < 1e6 ? b : 0), 0);
  console.log(
    `  peak beyond the weights: ${mb(f.peakBeyondWeights)} (${[...large.map(([who, b]) => `${who} ${mb(b)}`), `smaller buffers ${mb(small)}`].join(', ')})`,
  );
}

const out = mkdtempSync(join(tmpdir(), 'mw-bench-open-models-'));
const results: Record<string, { node?: OpenModelFigures; chromium?: OpenModelFigures; ort?: OrtFigures }> = {};
try {
  console.log(`load average ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores; ${RUNS} timed run(s) after a ${WARMUP}-token warm-up`);
  const configs = {} as Record<OpenModelName, FamilyConfig>;
  for (const name of MODELS) {
    const started = performance.now();
    configs[name] = writeFolder(join(out, name), name);
    console.log(`${name}: ${describeFamilyConfig(configs[name])}; folder written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    if (BROWSER && ORT) {
      writeFolder(join(out, `${name}-ort`), name, ORT_LAYERS);
      const exported = spawnSync(
        '/usr/bin/python3',
        ['bench/_onnx_export.py', join(out, `${name}-ort`), join(out, `${name}-ort.onnx`), '--tokens', String(ORT_TOKENS)],
        {
          stdio: 'inherit',
          env: { ...process.env, PYTHONPATH: 'python' },
        },
      );
      if (exported.status !== 0) throw new Error(`torch.onnx.export of ${name}-ort failed`);
    }
    results[name] = {};
  }

  if (NODE) {
    const gpu = await createGpu();
    console.log(`\nNode (Dawn) on ${adapterLine(gpu.info)}`);
    for (const name of MODELS) {
      const folder = await openModelFolderPath(join(out, name));
      const config = folder.config;
      results[name].node = await measureOpenModel(
        gpu,
        config,
        folder.source,
        editedRollout(config, WARMUP, 2),
        editedRollout(config, TOKENS[name]),
        RUNS,
        (l) => console.log(`  ${name}: ${l}`),
      );
      report('Node', name, results[name].node!);
    }
    gpu.destroy();
  }

  if (BROWSER) {
    const built = spawnSync(
      'npx',
      ['vite', 'build', '--config', 'vite.config.ts', '--logLevel', 'warn', '--outDir', join(out, 'page'), '--emptyOutDir', 'bench/open-models-page'],
      {
        stdio: 'inherit',
      },
    );
    if (built.status !== 0) throw new Error('vite build of bench/open-models-page failed');
    // The page is served from `out/page`; the folders and ONNX files sit beside its index.html.
    for (const name of MODELS) {
      for (const dir of [name, `${name}-ort`]) {
        spawnSync('ln', ['-s', join(out, dir), join(out, 'page', dir)]);
      }
      spawnSync('ln', ['-s', join(out, `${name}-ort.onnx`), join(out, 'page', `${name}-ort.onnx`)]);
    }
    mkdirSync(join(out, 'page', 'ort'));
    for (const file of ['ort-wasm-simd-threaded.jsep.mjs', 'ort-wasm-simd-threaded.jsep.wasm', 'ort-wasm-simd-threaded.mjs', 'ort-wasm-simd-threaded.wasm']) {
      copyFileSync(join('node_modules/onnxruntime-web/dist', file), join(out, 'page', 'ort', file));
    }
    const { server, url } = await serve(join(out, 'page'), { isolated: true });
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    try {
      const page = await browser.newPage();
      page.on('console', (m) => console.log(`  page: ${m.text()}`));
      const query = new URLSearchParams({
        models: MODELS.join(','),
        tokens: JSON.stringify(TOKENS),
        runs: String(RUNS),
        warmup: String(WARMUP),
        ortTokens: String(ORT_TOKENS),
        ort: ORT ? '1' : '0',
      });
      await page.goto(`${url}?${query}`);
      await page.waitForFunction(() => window.__openModels !== undefined, undefined, { timeout: 0, polling: 1000 });
      const result = await page.evaluate(() => window.__openModels!);
      if (result.error) throw new Error(`Chromium: ${result.error}`);
      for (const name of MODELS) {
        results[name].chromium = result.figures![name].model;
        results[name].ort = result.figures![name].ort;
        report('Chromium', name, results[name].chromium!);
      }
    } finally {
      await browser.close();
      server.close();
    }
  }

  console.log('\nSummary');
  for (const name of MODELS) {
    const r = results[name];
    if (r.node && r.chromium) console.log(`  ${name}: Chromium / Node tokens/s ${(r.chromium.tokensPerSecond / r.node.tokensPerSecond).toFixed(2)}`);
    const o = r.ort;
    if (o) {
      const webgpu =
        o.webgpuSeconds === null
          ? `onnxruntime-web WebGPU failed (${o.webgpuError})`
          : `WGSL is ${(o.webgpuSeconds / o.wgslSeconds).toFixed(2)}× as fast as onnxruntime-web WebGPU (${o.webgpuSeconds.toFixed(2)} s, max |Δ logprob| ${o.webgpuMaxDiff!.toExponential(1)})`;
      console.log(
        `  ${name}, first ${o.layers} layers, one causal ${o.tokens}-token sequence in Chromium: WGSL ${o.wgslSeconds.toFixed(2)} s; ${webgpu}; ` +
          `${(o.wasmSeconds / o.wgslSeconds).toFixed(2)}× as fast as its WASM with ${o.wasmThreads} thread(s) (${o.wasmSeconds.toFixed(2)} s, max |Δ logprob| ${o.wasmMaxDiff.toExponential(1)})`,
      );
    }
  }
  console.log(`load average at the end ${loadavg()[0].toFixed(1)}`);
} finally {
  rmSync(out, { recursive: true, force: true });
}
