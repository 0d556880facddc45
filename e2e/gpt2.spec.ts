// Real models in the page (issue 22): a chat log imported as GPT-2 word pieces reads as word pieces in
// the staircase and the context panes, with mw tree's counts, and gpt2's ranks are fetched only then;
// a published-layout GPT-2 checkpoint (vocabulary 50257, no metadata, tied head; random weights)
// dropped on the page scores every method of an imported agent session with a progress bar and a
// cancel, each target within 2e-4 of the float64 reference (e2e/gpt2-published.reference.json, computed once by
// scripts/gpt2-e2e-reference.mjs and checked here against the checkpoint and session it was computed from); a byte
// rollout under it is refused with the reason.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { csvParseRows } from 'd3';
import type { PublishedGpt2Reference } from '../src/testing/publishedGpt2Reference';
import { test, expect } from './fixtures';

const FIXTURES = fileURLToPath(new URL('../src/rollout/importers/fixtures/', import.meta.url));
const CHAT = join(FIXTURES, 'chat.jsonl');
const SESSION = join(FIXTURES, 'agent-session-two-compactions.jsonl');
/** The test run's mw: the bundle `npm test` builds (MW_CLI, the same main), else bin/mw.js. */
const MW = process.env.MW_CLI ? resolve(process.env.MW_CLI) : fileURLToPath(new URL('../bin/mw.js', import.meta.url));
/** src/testing/publishedGpt2Reference.ts's float64 scores of the published-layout test (scripts/gpt2-e2e-reference.mjs). */
const REFERENCE = fileURLToPath(new URL('gpt2-published.reference.json', import.meta.url));

/** `mw import --tokenizer gpt2` then `mw tree --json --per-target`, run here. */
function mwTree(file: string): { physicalLength: number; targets: number; perTarget: { id: number; livePrefix: number }[] }[] {
  const out = join(mkdtempSync(join(tmpdir(), 'mw-e2e-gpt2-')), 'imported.jsonl');
  execFileSync('node', [MW, 'import', file, '--tokenizer', 'gpt2', '--out', out], { stdio: 'ignore' });
  return JSON.parse(execFileSync('node', [MW, 'tree', out, '--json', '--per-target'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
}

async function importAsGpt2(page: Page, file: string, name: string) {
  await page.getByTestId('import-tokenizer').selectOption('gpt2');
  await page.getByTestId('rollout-file-input').setInputFiles({ name, mimeType: 'application/jsonl', buffer: readFileSync(file) });
}

test('a chat log imported as GPT-2 word pieces: word pieces in the staircase and the panes, mw tree counts, the ranks fetched only then', async ({ page }) => {
  const gpt2Chunks: string[] = [];
  page.on('request', (r) => /\/assets\/gpt2-[^/]*\.js$/.test(r.url()) && gpt2Chunks.push(r.url()));
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  expect(gpt2Chunks, 'a page that never sees gpt2 fetches no ranks').toEqual([]);

  await importAsGpt2(page, CHAT, 'chat.jsonl');
  await expect(page.getByTestId('rollout-id')).toHaveText('chat-1');
  // The rollout worker and the page each load the ranks once they need them.
  expect(gpt2Chunks.length).toBe(2);
  const figures = mwTree(CHAT);
  await page.getByTestId('rollout-picker').selectOption({ index: 1 });
  await expect(page.getByTestId('rollout-id')).toHaveText('conv-2');
  await expect(page.locator('section.summary .hint')).toContainText('tokenizer gpt2');
  await expect(page.getByTestId('stat-physicalLength')).toHaveText(String(figures[1].physicalLength));
  await expect(page.getByTestId('stat-targets')).toHaveText(String(figures[1].targets));

  // The staircase: the cell of target "weather" in its own step's row, hovered, then clicked.
  const canvas = page.getByTestId('staircase-canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = (await canvas.boundingBox())!;
  const d = await canvas.evaluate((el) => ({ ...(el as HTMLElement).dataset }));
  const weather = 19;
  const x = box.x + Number(d.plotLeft) + (weather + 0.5) * Number(d.cellWidth);
  let y = box.y + Number(d.plotTop) + Number(d.rowHeight) / 2;
  for (; y < box.y + box.height; y += Number(d.rowHeight) / 2) {
    await page.mouse.move(x, y);
    const tip = page.getByTestId('staircase-tooltip');
    if ((await tip.count()) && /decoded at this step/.test((await tip.textContent()) ?? '')) break;
  }
  await expect(page.getByTestId('staircase-tooltip')).toContainText(`id ${weather} “weather” (token 23563)`);
  await page.mouse.click(x, y);
  await expect(page.getByTestId('inspector-token')).toHaveText('“weather”');
  await expect(page.getByTestId('context-target')).toHaveText(`id ${weather} · “weather”`);

  // The panes: what the policy saw, decoded; with ids, one chip per word piece.
  const live = figures[1].perTarget.find((t) => t.id === weather)!.livePrefix;
  await expect(page.getByTestId('pane-tokens-live')).toHaveText(String(live));
  await expect(page.getByTestId('pane-live')).toContainText('Weather in Paris?');
  await page.getByTestId('context-show-ids').check();
  const chip = (id: number) => page.getByTestId('pane-live').locator(`[data-id="${id}"]`);
  await expect(chip(weather - 2)).toHaveCount(1);
  await expect(chip(weather - 2).locator('b')).toHaveText('get');
  await expect(chip(weather - 2).locator('i')).toHaveText(String(weather - 2));
  // "Weather in Paris?" is four word pieces of the prompt: " in" keeps its space.
  const prompt = await page
    .getByTestId('pane-live')
    .locator('[data-id] b')
    .evaluateAll((els) => els.map((e) => e.textContent));
  expect(prompt.slice(0, 12)).toEqual(['⏎', '⏎', 'User', ':', '⏎', 'Weather', ' in', ' Paris', '?', '⏎', '⏎', 'Assistant']);
});

test('a published-layout GPT-2 checkpoint dropped on the page scores every method within 2e-4 of the float64 reference, with progress and cancel', async ({
  page,
}) => {
  test.setTimeout(300_000);
  const { publishedGpt2Scene, SCORED_METHODS: methods } = await import('../src/testing/publishedGpt2Reference');
  const { buildPlan } = await import('../src/plan');
  const { bytes, rollout, tree, fingerprint } = await publishedGpt2Scene(readFileSync(SESSION, 'utf8'));
  // The float64 reference forward of every method's sequences (50257-wide rows), computed once and committed.
  const committed = JSON.parse(readFileSync(REFERENCE, 'utf8')) as PublishedGpt2Reference;
  expect(committed.fingerprint, `the checkpoint or the session changed: regenerate the reference (${committed.regenerate})`).toEqual(fingerprint);
  const reference = new Map(methods.map((m) => [m, new Map(committed.logprobs[m])]));
  const leaves = Array.from(tree.divergingLeaves);
  expect(leaves.length).toBe(committed.divergingLeaves);
  const klReference = committed.klSdcc;

  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await importAsGpt2(page, SESSION, 'session.jsonl');
  await expect(page.getByTestId('stat-K')).toHaveText('3');
  await expect(page.getByTestId('stat-physicalLength')).toHaveText(String(rollout.length));

  // Dropped as a person drops a download: a File named model.safetensors on the window.
  await page.route('**/__e2e/model.safetensors', (route) => route.fulfill({ body: Buffer.from(bytes), contentType: 'application/octet-stream' }));
  await page.evaluate(async () => {
    const blob = await (await fetch('/__e2e/model.safetensors')).blob();
    const transfer = new DataTransfer();
    transfer.items.add(new File([blob], 'model.safetensors'));
    window.dispatchEvent(new DragEvent('dragenter', { dataTransfer: transfer, cancelable: true }));
    window.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, cancelable: true }));
  });
  await expect(page.getByTestId('model-info')).toContainText('model.safetensors');
  await expect(page.getByTestId('model-info')).toContainText('V 50257, C 64, 2 layers, 1 heads, P 1024');

  // Tokens scored of the total, then a cancel: the panel offers to score again.
  const progress = page.getByTestId('drift-progress');
  await expect(progress).toBeVisible();
  const total = Number(await progress.getAttribute('data-total'));
  expect(total).toBe(methods.reduce((n, m) => n + buildPlan(tree, m).sequences.reduce((k, s) => k + s.ids.length, 0), 0));
  await page.getByTestId('drift-cancel').click();
  await expect(page.getByTestId('drift-cancelled')).toBeVisible();
  await expect(progress).toHaveCount(0);
  await page.getByTestId('drift-score-again').click();
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 240_000 });

  // Every target of every method, read from the Drift CSV, against the float64 reference.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-drift-csv').click()]);
  const [header, ...lines] = csvParseRows(readFileSync((await file.path())!, 'utf8'));
  for (const method of methods) {
    const col = header.indexOf(`${method}.logprob`);
    const scored = new Map(lines.filter((l) => l[col] !== '').map((l) => [Number(l[0]), Number(l[col])]));
    const want = reference.get(method)!;
    expect(
      [...scored.keys()].sort((a, b) => a - b),
      method,
    ).toEqual([...want.keys()].sort((a, b) => a - b));
    let worst = 0;
    for (const [id, lp] of want) worst = Math.max(worst, Math.abs(scored.get(id)! - lp));
    expect(worst, `${method}: max |page − float64|`).toBeLessThanOrEqual(2e-4);
  }
  // SDCC's KL at the diverging leaves, from the rows the page kept for them.
  const kl = Number(await page.getByTestId('drift-kl-sdcc').getAttribute('data-value'));
  await expect(page.getByTestId('drift-kl-sdcc')).toHaveAttribute('data-pairs', String(leaves.length));
  expect(Math.abs(kl - klReference)).toBeLessThanOrEqual(1e-4 + 1e-3 * klReference);

  // A byte rollout is refused by this model, saying why.
  await page.getByTestId('example-worked-example').click();
  await expect(page.getByTestId('drift-error')).toContainText(
    'rollout "worked-example" is tokenized with byte (vocabulary 272), but the model\'s vocabulary of 50257 is the gpt2 tokenizer\'s: import a chat or agent log with "text as: GPT-2 word pieces" for this model, or score this rollout with a byte model (the demo model)',
  );
});
