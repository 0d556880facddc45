// Reading what the policy saw, end to end (issue 17, the data half): the import report of a chat log
// with bad lines, the data-set table of a 1,000-rollout set (sorted, clicked, exported: the CSV is
// `mw tree --json`'s rows), the demo model one click away scoring every target under all five
// methods and still loaded after a reload, and the training panel collapsed until asked for.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { csvParseRows } from 'd3';
import { test, expect } from './fixtures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHAT = join(ROOT, 'src/rollout/importers/fixtures/chat.jsonl');

async function download(page: Page, testId: string): Promise<{ name: string; text: string }> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
}

test('a chat log with bad lines: every skipped line, with its number and reason, beside the summary', async ({ page }) => {
  const { readRolloutFile, formatFileReport } = await import('../src/rollout');
  // What `mw import` prints for the same file (Node's own JSON.parse message aside: the browser words line 4's differently).
  const expected = formatFileReport(readRolloutFile(readFileSync(CHAT, 'utf8'), 'chat.jsonl').report, 'chat.jsonl')
    .split('\n')
    .map((l) => l.trim());

  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'chat.jsonl', mimeType: 'application/jsonl', buffer: readFileSync(CHAT) });
  const report = page.getByTestId('import-report');
  await expect(report).toHaveAttribute('data-skipped', '3');
  await expect(report).toContainText(expected[0]);
  await expect(report).toContainText('3 records skipped');
  const lines = (await page.getByTestId('import-report-lines').locator('li').allTextContents()).map((l) => l.trim());
  expect(lines.filter((l) => l.startsWith('skipped'))).toEqual([
    'skipped 1: malformed (not JSON) [line 4]',
    'skipped 1: messages not understood [line 5]',
    'skipped 1: not a chat record (no "messages" array) [line 7]',
  ]);
  expect(lines.filter((l) => l.startsWith('skipped'))).toEqual(expected.filter((l) => l.startsWith('skipped')));
  expect(lines.filter((l) => /^chat\.jsonl:\d+: /.test(l)).map((l) => l.replace(/ \(.*$/, ''))).toEqual(
    ['chat.jsonl:4: not JSON', expected[5], expected[6]].map((l) => l.replace(/ \(.*$/, '')),
  );
  expect(lines).toContain(expected[5]); // chat.jsonl:5: messages[0]: role "narrator" is not one of ...
  expect(lines).toContain(expected[6]);
  // A v1 file reads as it is: one line, nothing skipped.
  await page.getByTestId('example-worked-example').click();
  await expect(report).toHaveAttribute('data-skipped', '0');
  await expect(report).toContainText('worked-example.json: read by the core: 1 rollout');
});

test('a 1,000-rollout set: its table, sorted by D, a click opens the rollout, and the CSV is mw tree --json', async ({ page }) => {
  test.setTimeout(180_000);
  const { generateRandomRollout } = await import('../src/rollout/generate-random');
  const dir = mkdtempSync(join(tmpdir(), 'mw-e2e-set-'));
  const file = join(dir, 'thousand.jsonl');
  const lines = Array.from({ length: 1000 }, (_, i) =>
    JSON.stringify({
      ...generateRandomRollout({ seed: 100 + i, tokens: 40 + (i % 7) * 10, edits: i % 4, id: `r${i}` }),
      ...(i % 3 ? { reward: (i % 5) / 4 } : {}),
    }),
  );
  writeFileSync(file, `${lines.join('\n')}\n`);
  const cli = JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'bin/mw.js'), 'tree', file, '--json'], { cwd: ROOT, maxBuffer: 1 << 26 }).toString(),
  ) as Record<string, number | string | null>[];
  expect(cli).toHaveLength(1000);

  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.getByTestId('rollout-file-input').setInputFiles(file);
  await expect(page.getByTestId('dataset-count')).toContainText('1000 rollouts', { timeout: 60_000 });
  // Virtualised: a screenful of rows in the DOM, not a thousand.
  expect(await page.getByTestId('dataset-row').count()).toBeLessThan(60);

  // Sorted by D, most first (ties in file order): the first row is the CLI's rollout with the largest D.
  await page.getByTestId('dataset-sort-divergingLeaves').click();
  await expect(page.getByTestId('dataset-sort-divergingLeaves')).toHaveAttribute('aria-sort', 'descending');
  const maxD = Math.max(...cli.map((r) => r.divergingLeaves as number));
  const top = cli.find((r) => r.divergingLeaves === maxD)!;
  const first = page.getByTestId('dataset-row').first();
  await expect(first).toHaveAttribute('data-id', String(top.id));
  await first.click();
  await expect(page.getByTestId('rollout-id')).toHaveText(String(top.id));
  await expect(page.getByTestId('stat-divergingLeaves')).toHaveText(String(maxD));
  await expect(page.getByTestId('stat-packedLength')).toHaveText(String(top.packedLength));
  await expect(page).toHaveURL(new RegExp(`rollout=${top.id}\\b`));

  // A filter narrows the rows; the CSV of all of them is the CLI's rows, field for field.
  await page.getByTestId('dataset-filter').fill(`D=${maxD}`);
  await expect(page.getByTestId('dataset-count')).toContainText(`${cli.filter((r) => r.divergingLeaves === maxD).length} shown`);
  await page.getByTestId('dataset-filter').fill('');
  const csv = await download(page, 'export-dataset-csv');
  expect(csv.name).toBe('thousand-rollouts.csv');
  const [header, ...rows] = csvParseRows(csv.text.trimEnd());
  expect(header).toEqual(Object.keys(cli[0]));
  expect(rows).toEqual(cli.map((r) => header.map((h) => (r[h] === null ? '' : String(r[h])))));
});

test('Use the demo model: every target under all five methods, the exact ones at the rollout’s own logprobs, kept after a reload', async ({ page }) => {
  test.setTimeout(240_000);
  const { parseRolloutFile } = await import('../src/rollout');
  const { deriveTree } = await import('../src/tree');
  const first = parseRolloutFile(readFileSync(join(ROOT, 'public/examples/demo-window.jsonl'), 'utf8'), 'demo-window.jsonl')[0];
  const f = deriveTree(first).figures;

  await page.goto('/?src=example:demo-window');
  await expect(page.getByTestId('rollout-id')).toHaveText(first.id);
  await page.getByTestId('use-demo-model').click();
  await expect(page.getByTestId('model-info')).toContainText('demo.safetensors');
  await expect(page.getByTestId('model-info')).toContainText('C 64, 2 layers, 4 heads');
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 120_000 });
  // Every target each method scores: the final walk's (dropped ones aside) for Naive-Compressed and SDCC's student, all of them otherwise.
  const scored = {
    'naive-compressed': f.targets - f.droppedTargets,
    'naive-full': f.targets,
    'logit-tree': f.targets,
    'packed-4d': f.targets,
    sdcc: f.targets - f.droppedTargets,
  };
  for (const [method, n] of Object.entries(scored)) await expect(page.getByTestId(`drift-scored-${method}`), method).toHaveText(String(n));
  await expect(page.getByTestId('drift-kl-sdcc')).toHaveAttribute('data-pairs', String(f.divergingLeaves));
  expect(Number(await page.getByTestId('drift-kl-sdcc').getAttribute('data-value'))).toBeGreaterThan(0);
  // The rollout records the demo model's own logprobs: the exact methods reproduce them, the naive ones show their signs.
  await expect(page.getByTestId('logprob-notice')).toHaveAttribute('data-kind', 'model');
  const value = async (id: string) => Number(await page.getByTestId(id).getAttribute('data-value'));
  for (const m of ['logit-tree', 'packed-4d']) expect(Math.abs(await value(`drift-mu-rollout-${m}`)), m).toBeLessThan(1e-4);
  expect(await value('drift-mu-rollout-naive-compressed')).toBeLessThan(-0.5);
  expect(await value('drift-mu-rollout-naive-full')).toBeGreaterThan(0);
  // Histograms: counts in words under the pointer; the tails beyond the axis counted, not lost.
  const nc = page.getByTestId('histogram-naive-compressed');
  const total = Number(await nc.getAttribute('data-total'));
  expect(total).toBe(scored['naive-compressed']);
  await nc.locator('rect[data-bin="10"]').hover();
  await expect(page.getByTestId('histogram-naive-compressed-readout')).toHaveText(/^\d+ targets? between −\S+ and \+\S+ nats$/);
  await page.getByTestId('histogram-log').check();
  await expect(nc.locator('text', { hasText: '(log)' })).toHaveCount(1);
  // Per-target drift as CSV, one row per target.
  const csv = await download(page, 'export-drift-csv');
  const [header, ...rows] = csvParseRows(csv.text.trimEnd());
  expect(rows).toHaveLength(f.targets);
  expect(header).toEqual(expect.arrayContaining(['id', 'live.logprob', 'naive-compressed.minusLive', 'naive-full.minusRollout', 'sdcc.kl']));
  // The table's row of the shown rollout is filled from the same scores.
  await expect(page.getByTestId('dataset-row').first().locator('[role=cell]').nth(9)).not.toHaveText('—');

  // After a reload the checkpoint is loaded again from IndexedDB, and scores the shown rollout.
  await page.reload();
  await expect(page.getByTestId('model-info')).toContainText('demo.safetensors');
  await expect(page.getByTestId('model-info')).toContainText('kept from your last visit');
  await expect(page.getByTestId('drift-table')).toBeVisible({ timeout: 120_000 });
  expect(Math.abs(await value('drift-mu-rollout-logit-tree'))).toBeLessThan(1e-4);

  // The worked example's logprobs are hand-made: the panel says so and compares the methods with each other.
  await page.getByTestId('example-worked-example').click();
  await expect(page.getByTestId('logprob-notice')).toHaveAttribute('data-kind', 'other', { timeout: 120_000 });
  await expect(page.getByTestId('logprob-notice')).toContainText('compared with each other');
  await expect(page.getByTestId('drift-mu-rollout-logit-tree')).toHaveCount(0);
  await expect(page.getByTestId('drift-mu-logit-tree')).toHaveText('0');
  // The expert's rollouts record 0 for every token: not a model's, said so, no "μ vs rollout" at all.
  await page.getByTestId('example-lookup-fold').click();
  await expect(page.getByTestId('logprob-notice')).toHaveAttribute('data-kind', 'zeros', { timeout: 120_000 });
  await expect(page.getByTestId('logprob-notice')).toContainText('a scripted policy (the expert) wrote it');
  await expect(page.getByTestId('drift-mu-rollout-logit-tree')).toHaveCount(0);
});

test('the first screen shows the views; the training panel is one line until opened, and stays as left', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  const panel = page.getByTestId('train-panel');
  await expect(panel).toHaveAttribute('data-open', 'false');
  await expect(panel).toContainText('Train a small GPT-2 in this tab');
  await expect(page.getByTestId('train-start')).toHaveCount(0);
  await page.getByTestId('train-panel-toggle').click();
  await expect(panel).toHaveAttribute('data-open', 'true');
  await expect(page.getByTestId('train-start')).toBeVisible();
  await page.reload();
  await expect(page.getByTestId('train-panel')).toHaveAttribute('data-open', 'true');
  await page.getByTestId('train-panel-toggle').click();
  await page.reload();
  await expect(page.getByTestId('train-panel')).toHaveAttribute('data-open', 'false');
});
