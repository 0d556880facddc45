// The playground end to end (issue 30): from nothing, typed pieces and clicked edits build the
// worked example's tree while every view follows; `mw tree` on the downloaded file gives the figures
// the page shows; the link opens the same rollout in the playground of a fresh page; a refused edit
// says why; undo and redo (buttons and keys). Also: the training config's "start from" drop-down is
// not cut off.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from '@playwright/test';
import { test, expect } from './fixtures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FIGURES = ['K', 'branches', 'physicalLength', 'finalWalkLength', 'packedLength', 'targets', 'droppedTargets', 'divergingLeaves', 'evictionMassTotal'];

async function add(page: Page, role: 'prompt' | 'obs' | 'act', text: string) {
  await page.getByTestId('play-role').selectOption(role);
  await page.getByTestId('play-text').fill(text);
  await page.getByTestId('play-text').press('Enter');
  await expect(page.getByTestId('play-text')).toHaveValue('');
}

/** Clicks the chip of id `first`, shift-clicks the chip of id `last`. */
async function select(page: Page, first: number, last: number) {
  await page.locator(`[data-testid=play-live] [data-id="${first}"]`).click();
  await page.locator(`[data-testid=play-live] [data-id="${last}"]`).click({ modifiers: ['Shift'] });
}

async function pageFigures(page: Page): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const f of FIGURES) out[f] = Number(await page.getByTestId(`stat-${f}`).textContent());
  return out;
}

const live = (page: Page) => page.locator('[data-testid=play-live] [data-id]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-id'))));

test('from nothing, typing and clicks build the worked example: every view follows, mw tree on the download agrees, the link reopens it', async ({
  page,
  browser,
  baseURL,
}) => {
  await page.goto('/?src=example:worked-example');
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await page.getByTestId('playground-open').click();
  await expect(page.getByTestId('playground')).toBeVisible();

  await add(page, 'prompt', 'Fix tests');
  await expect(page.getByTestId('rollout-id')).toHaveText('playground');
  await add(page, 'act', 'run tests');
  await add(page, 'obs', 'parser test fails');
  await add(page, 'act', 'open parser');
  expect(await live(page)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
  await expect(page.getByTestId('stat-K')).toHaveText('0');

  // Edit 1: the old turn 2–6 compacted into a typed summary.
  await select(page, 2, 6);
  await expect(page.getByTestId('play-selection')).toHaveText('selected: ids 2 3 4 5 6');
  await page.getByTestId('play-summary').fill('parser broken');
  await page.getByTestId('play-summarize').click();
  expect(await live(page)).toEqual([0, 1, 9, 10, 7, 8]);
  await expect(page.getByTestId('stat-K')).toHaveText('1');
  await expect(page.locator('[data-testid=play-live] [data-id="9"]')).toContainText('parser');

  await add(page, 'obs', 'missing comma');
  await add(page, 'act', 'add comma');
  // A refused edit: a window that evicts nothing, with the reason; the rollout stays.
  await page.getByTestId('play-window').fill('10');
  await page.getByTestId('play-slide').click();
  await expect(page.getByTestId('play-refusal')).toHaveText('Not done: the context holds 10 tokens: a window of 10 would evict nothing');
  await expect(page.getByTestId('stat-K')).toHaveText('1');

  // Edit 2, by keyboard: select 7, then shift-arrow to 12, and evict.
  await page.locator('[data-testid=play-live] [data-id="7"]').click();
  for (let i = 0; i < 3; i++) await page.keyboard.press('Shift+ArrowRight');
  await expect(page.getByTestId('play-selection')).toHaveText('selected: ids 7 8 11 12');
  await page.getByTestId('play-evict').click();
  await expect(page.getByTestId('play-refusal')).toHaveCount(0);
  await add(page, 'act', 'run tests');
  expect(await live(page)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);

  // The page shows the worked example's figures, in every view.
  const shown = await pageFigures(page);
  expect(shown).toEqual({
    K: 2,
    branches: 3,
    physicalLength: 17,
    finalWalkLength: 8,
    packedLength: 21,
    targets: 8,
    droppedTargets: 4,
    divergingLeaves: 2,
    evictionMassTotal: 8,
  });
  await expect(page.locator('[data-testid=tree-svg] [data-tour="junction"]')).toHaveCount(2);

  // Undo and redo: the buttons, then the keys (from a token of the context, not a text field).
  await expect(page.locator('[data-testid=play-events] li')).toHaveCount(9);
  await page.getByTestId('play-undo').click();
  await expect(page.getByTestId('stat-targets')).toHaveText('6');
  await page.getByTestId('play-redo').click();
  await expect(page.getByTestId('stat-targets')).toHaveText('8');
  await page.locator('[data-testid=play-live] [data-id="0"]').focus();
  await page.keyboard.press('Control+z');
  await expect(page.getByTestId('stat-targets')).toHaveText('6');
  await expect(page.getByTestId('stat-K')).toHaveText('2');
  await page.keyboard.press('Control+Shift+z');
  await expect(page.getByTestId('stat-targets')).toHaveText('8');

  // The link holds the rollout, and so does the address bar (once the edits pause): reloaded with
  // target 13 (“add”), the inspector shows its eviction mass 4.
  await expect(page.getByTestId('play-link-state')).toContainText('A link holds it');
  await page.getByTestId('play-link-button').click();
  const link = await page.getByTestId('play-link').inputValue();
  const code = new URL(link).searchParams.get('play')!;
  expect(code.length).toBeGreaterThan(0);
  await expect.poll(() => new URL(page.url()).searchParams.get('play')).toBe(code);
  const url = new URL(page.url());
  expect(url.searchParams.get('src')).toBe('playground:playground');
  url.searchParams.set('target', '13');
  await page.goto(`${url.pathname}${url.search}`);
  await expect(page.getByTestId('playground')).toBeVisible();
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await expect(page.locator('[data-tour="fact-eviction-mass"]')).toContainText('4');
  expect(await pageFigures(page)).toEqual(shown);

  // The download is a rollout file: mw tree gives the page's figures.
  const [file] = await Promise.all([page.waitForEvent('download'), page.getByTestId('play-download').click()]);
  expect(file.suggestedFilename()).toBe('playground.json');
  const path = (await file.path())!;
  const json = JSON.parse(readFileSync(path, 'utf8'));
  expect(json).toMatchObject({ format: 'memorywalker.rollout/v1', id: 'playground', tokenizer: 'gpt2', vocab: 50257 });
  const cli = JSON.parse(execFileSync(process.execPath, [join(ROOT, 'bin/mw.js'), 'tree', path, '--json'], { cwd: ROOT }).toString());
  const fromCli = Object.fromEntries(FIGURES.map((f) => [f, cli[f]]));
  expect(fromCli).toEqual(shown);
  expect(fromCli).toEqual(await pageFigures(page));
  // The same events as the shipped worked example in words (which adds log-probabilities).
  const words = JSON.parse(readFileSync(join(ROOT, 'public/examples/worked-words.json'), 'utf8'));
  expect(json.events).toEqual(words.events.map((e: { op: string; logprobs?: number[] }) => (e.op === 'append' ? { ...e, logprobs: undefined } : e)).map(strip));

  // The link: a fresh page (its own context, no storage) opens the same rollout in the playground.
  const fresh = await browser.newContext({ baseURL });
  try {
    const other = await fresh.newPage();
    await other.goto(link);
    await expect(other.getByTestId('rollout-id')).toHaveText('playground');
    await expect(other.getByTestId('playground')).toBeVisible();
    expect(await pageFigures(other)).toEqual(shown);
    expect(await live(other)).toEqual([0, 1, 9, 10, 13, 14, 15, 16]);
    // It is ready to edit: one more action.
    await add(other, 'act', 'tests pass');
    await expect(other.getByTestId('stat-targets')).toHaveText('10');
  } finally {
    await fresh.close();
  }
});

/** JSON as written: an undefined field is absent. */
function strip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

test('the training config names its starting model in full: nothing cut off in the closed drop-down', async ({ page }) => {
  await page.goto('/?src=example:worked-example');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await page.locator('[data-testid="train-panel"] .disclosure').click();
  const select = page.getByTestId('config-model');
  await expect(select).toBeVisible();
  // The selected option's text, measured in the select's own font, fits inside it (arrow and padding included).
  const [text, room] = await select.evaluate((el: HTMLSelectElement) => {
    const ctx = document.createElement('canvas').getContext('2d')!;
    ctx.font = getComputedStyle(el).font;
    return [ctx.measureText(el.options[el.selectedIndex].text).width, el.clientWidth - 30];
  });
  expect(text).toBeLessThan(room);
  await expect(page.getByTestId('config-model-detail')).toHaveText('fresh weights: V 272, C 32, 2 layers, 2 heads, P 128');
});
