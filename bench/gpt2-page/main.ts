// bench/gpt2.ts in Chromium: the published-layout file fetched as a user would drop it, tokenized
// text from a Web Worker, then the same measurement as in Node (bench/_gpt2.ts). The result goes to
// window.__gpt2 for the bench to read.
import { createGpu } from '../../src/gpu/runtime/device';
import { pickMatmulVariant } from '../../src/gpu/kernels/matmul/matmul-autotune';
import { loadCheckpoint } from '../../src/model/checkpoint';
import { PROSE, gpt2Rollout, measureGpt2, type Gpt2Figures } from '../_gpt2';

declare global {
  interface Window {
    __gpt2?: { figures?: Gpt2Figures; error?: string; workerTokens?: number };
  }
}

const log = (line: string) => {
  document.getElementById('log')!.textContent += `${line}\n`;
  console.log(line);
};

async function tokensFromWorker(text: string): Promise<number[]> {
  const worker = new Worker(new URL('./tokenize.worker.ts', import.meta.url), { type: 'module' });
  try {
    return await new Promise((resolve, reject) => {
      worker.onmessage = (e: MessageEvent<{ tokens: number[] }>) => resolve(e.data.tokens);
      worker.onerror = (e) => reject(new Error(e.message));
      worker.postMessage({ text });
    });
  } finally {
    worker.terminate();
  }
}

async function run(): Promise<void> {
  const tokens = await tokensFromWorker(PROSE.repeat(24));
  log(`worker: ${tokens.length} gpt2 tokens`);
  const bytes = new Uint8Array(await (await fetch('./gpt2.safetensors')).arrayBuffer());
  const weights = loadCheckpoint(bytes);
  log(`loaded ${bytes.length} bytes: V ${weights.config.vocabSize}, C ${weights.config.nEmbd}, ${weights.config.nLayer} layers, ${weights.config.nHead} heads`);
  const gpu = await createGpu();
  await pickMatmulVariant(gpu);
  const runs = Number(new URLSearchParams(location.search).get('runs') ?? '1');
  const figures = await measureGpt2(gpu, weights, gpt2Rollout(tokens, 64), gpt2Rollout(tokens), runs, log);
  gpu.destroy();
  window.__gpt2 = { figures, workerTokens: tokens.length };
}

run().catch((error: unknown) => {
  window.__gpt2 = { error: error instanceof Error ? error.message : String(error) };
});
