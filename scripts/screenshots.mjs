// Screenshots of the inspection views for the README (docs/screenshots/*.png): builds the app,
// serves the build on 127.0.0.1, and drives Debian's Chromium through the page.
// Run: node --import ./scripts/register.mjs scripts/screenshots.mjs [--no-build] [--out DIR]
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium.ts';
import { generateRandomRollout } from '../src/rollout/generate-random.ts';
import { writeFamilyFolder } from '../src/testing/familyFolders.ts';

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
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
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

  // The packed 4D mask beside the causal masks of the final walk and of the tape (target 13 selected).
  await page.locator('.mask-panel').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => performance.getEntriesByName('mw:mask-packed-4d-drawn').length > 0);
  await page.waitForTimeout(200);
  await page.locator('.mask-panel').screenshot({ path: join(out, 'mask.png') });

  // Three steps of the guided tour, as a student sees them (the bar docked at the bottom).
  for (const step of [1, 5, 7]) {
    await page.goto(`${base}?tour=${step}`);
    await views(page);
    await page.locator(`[data-testid="tour"][data-step="${step}"]:not([data-busy])`).waitFor();
    await page.waitForTimeout(900); // the scroll to the step's first highlight
    await page.screenshot({ path: join(out, `tour-step-${step}.png`) });
  }
  await page.keyboard.press('Escape');

  // The glossary, open at an entry a label links to.
  await page.goto(`${base}?src=example:worked-example&target=13&glossary=eviction-mass`);
  await views(page);
  await page.screenshot({ path: join(out, 'glossary.png') });

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

  // The demo model playing the collect task under a compacting editor: real text, real edits.
  await page.goto(`${base}?src=example:demo-compact`);
  await page.getByTestId('rollout-id').filter({ hasText: 'compact' }).waitFor();
  await views(page);
  await page.screenshot({ path: join(out, 'demo.png') });
  await page.locator('.tree-panel').screenshot({ path: join(out, 'demo-tree.png') });

  // Drift: the demo model (one click) scores its own rollouts on WebGPU; targets coloured by
  // Naive-Compressed's difference to the live-prefix score. Its table row fills in from the same scores.
  await page.goto(`${base}?src=example:demo-window&color=drift`);
  await page.getByTestId('rollout-id').filter({ hasText: 'window' }).waitFor();
  await page.getByTestId('use-demo-model').click();
  await page.getByTestId('drift-table').waitFor({ timeout: 120_000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'drift.png') });
  // The panel with what its numbers mean open, and the pointer on a bar of Naive-Compressed's histogram.
  await page.getByTestId('drift-terms').locator('summary').click();
  await page.locator('.drift').scrollIntoViewIfNeeded();
  await page.getByTestId('histogram-naive-compressed').locator('rect[data-bin="8"]').hover();
  await page.waitForTimeout(300);
  await page.locator('.drift').screenshot({ path: join(out, 'drift-panel.png') });

  // The data-set table: 24 rollouts the demo model plays under three editors (mw generate, as
  // scripts/examples.mjs does), scored by it, sorted by D (a wider window: every column in sight).
  const playDir = mkdtempSync(join(tmpdir(), 'mw-shots-'));
  const played = ['window', 'compact', 'stack'].map((editor) => {
    const file = join(playDir, `${editor}.jsonl`);
    const run = spawnSync(
      process.execPath,
      [
        'bin/mw.js',
        'generate',
        '--ckpt',
        'public/models/demo.safetensors',
        '--env',
        'collect:decoys=0,filler=20',
        '--editor',
        editor,
        '--budget',
        '100',
        '--n',
        '8',
        '--seed',
        '2',
        '--temperature',
        '0',
        '--out',
        file,
      ],
      { stdio: 'inherit' },
    );
    if (run.status !== 0) throw new Error(`mw generate --editor ${editor} failed`);
    return readFileSync(file, 'utf8');
  });
  await page.setViewportSize({ width: 2300, height: 1000 });
  await page.goto(`${base}`);
  await page.getByTestId('model-info').filter({ hasText: 'kept from your last visit' }).waitFor(); // the demo model, loaded again from IndexedDB
  await page
    .getByTestId('rollout-file-input')
    .setInputFiles({ name: 'demo-model-24.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(played.join('')) });
  await page.getByTestId('dataset-count').filter({ hasText: '24 rollouts' }).waitFor();
  await page.getByTestId('rollout-id').filter({ hasText: 'window-r0' }).waitFor();
  await page.getByTestId('drift-table').waitFor({ timeout: 120_000 });
  await page.getByTestId('dataset-score').click();
  await page.getByTestId('dataset-scoring').waitFor({ state: 'detached', timeout: 240_000 });
  await page.getByTestId('dataset-sort-divergingLeaves').click();
  await page.waitForTimeout(300);
  await page.locator('.dataset').screenshot({ path: join(out, 'dataset-table.png') });
  await page.setViewportSize({ width: 1600, height: 1000 });

  // The import report of a chat log with three bad lines (src/rollout/importers/fixtures/chat.jsonl).
  await page.getByTestId('rollout-file-input').setInputFiles('src/rollout/importers/fixtures/chat.jsonl');
  await page.getByTestId('import-report').filter({ hasText: '3 records skipped' }).waitFor();
  await page.waitForTimeout(300);
  const box = await page.locator('.summary').boundingBox();
  const report = await page.locator('.import-report').boundingBox();
  await page.screenshot({ path: join(out, 'import-report.png'), clip: { x: box.x, y: box.y, width: box.width, height: report.y + report.height - box.y } });

  // The same chat log as GPT-2 word pieces (the choice beside Open rollout… imports the open file
  // again): conv-2's weather question with target "weather" selected, the staircase zoomed in so
  // the pieces read, and the context panes with one chip per word piece under its id.
  await page.getByTestId('import-tokenizer').selectOption('gpt2');
  await page.locator('section.summary .hint').filter({ hasText: 'tokenizer gpt2' }).waitFor();
  await page.getByTestId('rollout-picker').selectOption({ index: 1 });
  await page.getByTestId('rollout-id').filter({ hasText: 'conv-2' }).waitFor();
  for (let i = 0; i < 5; i++) await page.getByTestId('target-next').click();
  await page.getByTestId('inspector-target').filter({ hasText: '19' }).waitFor();
  const stair = page.getByTestId('staircase-canvas');
  await stair.scrollIntoViewIfNeeded();
  const at = await stair.evaluate((el) => ({ ...el.dataset }));
  const sbox = await stair.boundingBox();
  await page.mouse.move(sbox.x + Number(at.plotLeft) + 4 * Number(at.cellWidth), sbox.y + Number(at.plotTop) + 2 * Number(at.rowHeight));
  for (let i = 0; i < 8; i++) await page.mouse.wheel(0, -120);
  await page.mouse.move(sbox.x + sbox.width - 5, sbox.y + 5);
  await page.waitForTimeout(400);
  await page.locator('.staircase-panel').screenshot({ path: join(out, 'staircase-gpt2.png') });
  await page.getByTestId('context-show-ids').check();
  await page.waitForTimeout(300);
  await page.locator('.context-panel').screenshot({ path: join(out, 'context-panes-gpt2.png') });

  // A generated rollout with text pieces: a larger tree and staircase.
  const rollout = generateRandomRollout({ seed: 7, tokens: 900, edits: 8, textRate: 0.5, id: 'generated-900' });
  await page.goto(`${base}?rows=step`);
  await page
    .getByTestId('rollout-file-input')
    .setInputFiles({ name: 'generated-900.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(rollout)) });
  await page.getByTestId('rollout-id').filter({ hasText: 'generated-900' }).waitFor();
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(out, 'generated.png') });

  // A model folder (a tiny random Qwen3, written as the tests write one) picked in the drift panel: its
  // tokenizer and chat template become the load bar's import choice, and an agent session imported with
  // them is scored under every method. Last: the folder is kept in IndexedDB and would load on later pages.
  const folderDir = join(mkdtempSync(join(tmpdir(), 'mw-shots-')), 'qwen3');
  writeFamilyFolder(folderDir, 'qwen3', 3);
  await page.goto(`${base}?rows=step`);
  await page.getByTestId('rollout-id').waitFor();
  await page.getByTestId('model-folder-input').setInputFiles(folderDir);
  await page.getByTestId('model-info').filter({ hasText: 'tokenizer hf:qwen3' }).waitFor({ timeout: 60_000 });
  await page.getByTestId('rollout-file-input').setInputFiles({
    name: 'agent-session-two-compactions.jsonl',
    mimeType: 'application/jsonl',
    buffer: readFileSync('src/rollout/importers/fixtures/agent-session-two-compactions.jsonl'),
  });
  await page.getByTestId('drift-table').waitFor({ timeout: 240_000 });
  await page.waitForTimeout(500);
  await page.locator('.loadbar').screenshot({ path: join(out, 'loadbar-model-tokenizer.png') });
  await page.locator('.drift').screenshot({ path: join(out, 'drift-model-folder.png') });
  await browser.close();
  console.log(`screenshots in ${out}/`);
} finally {
  stop();
}
