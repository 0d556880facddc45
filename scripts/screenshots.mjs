// Screenshots of the inspection views for the README (docs/screenshots/*.png): builds the app,
// serves the build on 127.0.0.1, and drives Debian's Chromium through the page.
// Run: node --import ./scripts/register.mjs scripts/screenshots.mjs [--no-build] [--out DIR]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS } from '../playwright.config.ts';
import { generateRandomRollout } from '../src/rollout/generate-random.ts';
import { saveCheckpoint } from '../src/model/checkpoint.ts';
import { MODEL_PRESETS } from '../src/model/config.ts';
import { randomWeights } from '../src/model/random-weights.ts';

const args = process.argv.slice(2);
const out = args.includes('--out') ? args[args.indexOf('--out') + 1] : 'docs/screenshots';
const port = Number(process.env.MW_SHOT_PORT ?? 4183);
mkdirSync(out, { recursive: true });

if (!args.includes('--no-build')) {
  const built = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { stdio: 'inherit' });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

const server = spawn('npx', ['vite', 'preview', '--host', '127.0.0.1', '--port', String(port), '--strictPort'], { stdio: 'pipe', detached: true });
const stop = () => {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {}
};
process.on('exit', stop);

async function waitForServer() {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`);
      if (r.ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('vite preview did not start');
}

async function views(page) {
  await page.getByTestId('stat-K').waitFor();
  await page.waitForFunction(() => performance.getEntriesByName('mw:tree-drawn').length > 0 && performance.getEntriesByName('mw:staircase-drawn').length > 0);
  await page.waitForTimeout(300);
}

try {
  await waitForServer();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage({ viewport: { width: 1600, height: 1000 }, deviceScaleFactor: 2 });
  page.on('pageerror', (e) => console.error('page error:', e));
  const base = `http://127.0.0.1:${port}/`;

  // The worked example, target 13 (a diverging leaf) selected, Naive-Compressed emphasised.
  await page.goto(`${base}?src=example:worked-example&target=13`);
  await views(page);
  await page.screenshot({ path: join(out, 'workbench.png') });
  await page.locator('.staircase-panel').screenshot({ path: join(out, 'staircase.png') });
  await page.locator('.tree-panel').screenshot({ path: join(out, 'tree.png') });
  await page.locator('.inspector').screenshot({ path: join(out, 'inspector.png') });

  // The context panes of target 13: tokens with their ids (the worked example has no text).
  await page.locator('.context-panel').screenshot({ path: join(out, 'context-panes-worked.png') });

  await page.getByTestId('rows-segment').click();
  await page.waitForTimeout(200);
  await page.locator('.staircase-panel').screenshot({ path: join(out, 'staircase-segments.png') });

  // The context panes on a real transcript: an agent-CLI session with two compactions, at its first
  // diverging leaf (after the microcompaction): the tool result the policy read is missing from the
  // final walk, and the "[Old tool result content cleared]" written later shows in its place.
  await page.goto(`${base}?rows=step`);
  await page.getByTestId('rollout-file-input').setInputFiles({
    name: 'agent-session-two-compactions.jsonl',
    mimeType: 'application/jsonl',
    buffer: readFileSync('src/rollout/importers/fixtures/agent-session-two-compactions.jsonl'),
  });
  await page.getByTestId('stat-K').filter({ hasText: '3' }).waitFor();
  await views(page);
  await page.getByTestId('find-input').fill('Tests: 2 passed');
  await page.getByTestId('find-input').press('Enter');
  await page.waitForTimeout(500);
  await page.locator('.context-panel').screenshot({ path: join(out, 'context-panes.png') });

  // A harness demo (lookup task, compacting editor, expert policy): real text, real edits.
  await page.goto(`${base}?src=example:lookup-compact`);
  await page.getByTestId('rollout-id').filter({ hasText: 'lookup' }).waitFor();
  await views(page);
  await page.screenshot({ path: join(out, 'demo.png') });
  await page.locator('.tree-panel').screenshot({ path: join(out, 'demo-tree.png') });

  // Drift: an untrained GPT-2 (random weights, named as such) scores the demo on WebGPU; targets
  // coloured by Naive-Compressed's difference to the live-prefix score.
  const weights = randomWeights({ ...MODEL_PRESETS.tiny, nPositions: 512 }, 7);
  await page.goto(`${base}?src=example:lookup-compact&color=drift`);
  await page.getByTestId('rollout-id').filter({ hasText: 'lookup' }).waitFor();
  await page.getByTestId('checkpoint-file-input').setInputFiles({ name: 'untrained-random-tiny.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.from(saveCheckpoint(weights)) });
  await page.getByTestId('drift-table').waitFor({ timeout: 120_000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'drift.png') });
  await page.locator('.drift').screenshot({ path: join(out, 'drift-panel.png') });

  // A generated rollout with text pieces: a larger tree and staircase.
  const rollout = generateRandomRollout({ seed: 7, tokens: 900, edits: 8, textRate: 0.5, id: 'generated-900' });
  await page.goto(`${base}?rows=step`);
  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'generated-900.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(rollout)) });
  await page.getByTestId('rollout-id').filter({ hasText: 'generated-900' }).waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'generated.png') });
  await browser.close();
  console.log(`screenshots in ${out}/`);
} finally {
  stop();
}
