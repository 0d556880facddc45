// bench/open-models.ts in Chromium: each model folder fetched as a user would drop it (its files as
// Blobs, read through File.slice()), loaded and scored as in Node (bench/_open-models.ts); then the
// folder cut to a few layers scores one causal sequence in this project's WGSL and its ONNX export runs
// in onnxruntime-web on WebGPU and on WASM, timed and compared. Results go to window.__openModels.
import * as ort from 'onnxruntime-web';
import { createGpu } from '../../src/gpu/runtime/device';
import { loadFamilyModel } from '../../src/gpu/family-model';
import { blobModelFolder, openModelFolder } from '../../src/model/family/folder';
import {
  causalRollout,
  comparisonTokens,
  editedRollout,
  logprobsFromLogits,
  maxAbsDiff,
  measureOpenModel,
  wgslCausal,
  type OpenModelFigures,
} from '../_open-models';

export interface OrtFigures {
  layers: number;
  tokens: number;
  wgslSeconds: number;
  webgpuSeconds: number | null;
  wasmSeconds: number;
  wasmThreads: number;
  /** Largest |Δ log-probability| of the targets between this project's WGSL and each runtime. */
  webgpuMaxDiff: number | null;
  wasmMaxDiff: number;
  webgpuError?: string;
}

declare global {
  interface Window {
    __openModels?: { figures?: Record<string, { model: OpenModelFigures; ort?: OrtFigures }>; error?: string };
  }
}

const log = (line: string) => {
  document.getElementById('log')!.textContent += `${line}\n`;
  console.log(line);
};

const params = new URLSearchParams(location.search);
const models = (params.get('models') ?? '').split(',').filter(Boolean);
const tokensOf = JSON.parse(params.get('tokens') ?? '{}') as Record<string, number>;
const runs = Number(params.get('runs') ?? '1');
const warmup = Number(params.get('warmup') ?? '24');
const ortTokens = Number(params.get('ortTokens') ?? '64');
const withOrt = params.get('ort') !== '0';

async function fetchFolder(name: string) {
  const files = ((await (await fetch(`${name}/files.json`)).json()) as string[]).filter((f) => f !== 'files.json');
  const blobs = new Map<string, Blob>();
  for (const file of files) blobs.set(file, await (await fetch(`${name}/${file}`)).blob());
  return openModelFolder(blobModelFolder(name, blobs));
}

/** Seconds of one run of the ONNX file on `provider` (after a first run that compiles), and its logits. */
async function ortRun(file: string, provider: 'webgpu' | 'wasm', tokens: number[]): Promise<{ seconds: number; logits: Float32Array }> {
  const session = await ort.InferenceSession.create(file, { executionProviders: [provider], graphOptimizationLevel: 'all' });
  try {
    const T = tokens.length;
    const mask = new Uint8Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j <= i; j++) mask[i * T + j] = 1;
    const feeds = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, T]),
      position_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from(tokens, (_, i) => BigInt(i)),
        [1, T],
      ),
      mask: new ort.Tensor('bool', mask, [T, T]),
    };
    await session.run(feeds);
    const started = performance.now();
    const out = await session.run(feeds);
    const seconds = (performance.now() - started) / 1000;
    return { seconds, logits: out.logits.data as Float32Array };
  } finally {
    await session.release();
  }
}

try {
  const gpu = await createGpu();
  ort.env.wasm.wasmPaths = new URL('ort/', location.href).href;
  ort.env.wasm.numThreads = crossOriginIsolated ? Math.min(2, navigator.hardwareConcurrency) : 1;
  const figures: Record<string, { model: OpenModelFigures; ort?: OrtFigures }> = {};
  for (const name of models) {
    log(`${name}: fetching the folder`);
    const folder = await fetchFolder(name);
    const T = tokensOf[name];
    const model = await measureOpenModel(
      gpu,
      folder.config,
      folder.source,
      editedRollout(folder.config, warmup, 2),
      editedRollout(folder.config, T),
      runs,
      (l) => log(`  ${l}`),
    );
    figures[name] = { model };
    if (withOrt) {
      const cut = await fetchFolder(`${name}-ort`);
      const tokens = comparisonTokens(cut.config.vocabSize, ortTokens);
      const wgsl = await loadFamilyModel(gpu, cut.config, cut.source);
      const ours = await wgslCausal(wgsl, causalRollout(cut.config, tokens));
      wgsl.destroy();
      log(`  ${cut.config.nLayer} layers, ${ortTokens} causal tokens: WGSL ${ours.seconds.toFixed(2)} s`);
      const file = `${name}-ort.onnx`;
      let webgpu: { seconds: number; logits: Float32Array } | null = null;
      let webgpuError: string | undefined;
      try {
        webgpu = await ortRun(file, 'webgpu', tokens);
        log(`  onnxruntime-web WebGPU ${webgpu.seconds.toFixed(2)} s`);
      } catch (error) {
        webgpuError = String((error as Error).message ?? error).split('\n')[0];
        log(`  onnxruntime-web WebGPU failed: ${webgpuError}`);
      }
      const wasm = await ortRun(file, 'wasm', tokens);
      log(`  onnxruntime-web WASM (${ort.env.wasm.numThreads} threads) ${wasm.seconds.toFixed(2)} s`);
      const V = cut.config.vocabSize;
      figures[name].ort = {
        layers: cut.config.nLayer,
        tokens: ortTokens,
        wgslSeconds: ours.seconds,
        webgpuSeconds: webgpu?.seconds ?? null,
        wasmSeconds: wasm.seconds,
        wasmThreads: Number(ort.env.wasm.numThreads),
        webgpuMaxDiff: webgpu ? maxAbsDiff(ours.logprobs, logprobsFromLogits(webgpu.logits, tokens, V)) : null,
        wasmMaxDiff: maxAbsDiff(ours.logprobs, logprobsFromLogits(wasm.logits, tokens, V)),
        webgpuError,
      };
    }
  }
  window.__openModels = { figures };
} catch (error) {
  window.__openModels = { error: (error as Error).stack ?? String(error) };
}
