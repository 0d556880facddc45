import { chromium } from '@playwright/test';
import { readFileSync } from 'node:fs';
const base = 'http://127.0.0.1:4807/';
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--enable-unsafe-webgpu', '--no-sandbox', '--disable-dev-shm-usage'] });
const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
page.on('pageerror', (e) => console.error('page error:', e));
page.on('console', (m) => m.type() === 'error' && console.error('console:', m.text()));
const step = process.argv[2] ?? 'first';
if (step === 'first') {
  await page.goto(base);
  await page.getByTestId('rollout-id').waitFor();
  await page.waitForTimeout(1000);
  await page.screenshot({ path: '/tmp/data-shots/first.png' });
  await page.getByTestId('rollout-file-input').setInputFiles({ name: 'chat.jsonl', mimeType: 'application/jsonl', buffer: readFileSync('/work/wt/data/src/rollout/importers/fixtures/chat.jsonl') });
  await page.getByTestId('import-report').waitFor();
  await page.waitForTimeout(800);
  await page.screenshot({ path: '/tmp/data-shots/chat.png' });
}
if (step === 'demo') {
  await page.goto(base + '?src=example:demo-window');
  await page.getByTestId('rollout-id').waitFor();
  await page.getByTestId('use-demo-model').click();
  await page.getByTestId('drift-table').waitFor({ timeout: 120000 });
  await page.waitForTimeout(800);
  await page.screenshot({ path: '/tmp/data-shots/demo.png', fullPage: true });
  await page.locator('.drift').screenshot({ path: '/tmp/data-shots/drift.png' });
  await page.locator('.dataset').screenshot({ path: '/tmp/data-shots/table.png' });
}
await browser.close();
