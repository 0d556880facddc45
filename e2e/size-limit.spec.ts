// The rollout that froze the page for 80–137 s (issue 31): 211 KB whose 2,000 edits each evict one
// token, N_packed 4,000,000. Its N_packed is counted in the rollout worker from the events and the
// page refuses it above its "largest tree" limit before deriving anything: the message names the
// figure and the limit, the rollout shown before stays, and no task on the main thread takes 100 ms.
// Under the limit the worker derives the rollout (tree, plans, masks, the tree's layout: core/derived.ts)
// and the page shows it whole, after "Deriving the conditioning tree…".
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evictingRollout } from '../src/testing/evicting';
import { expect, test } from './fixtures';

declare global {
  interface Window {
    longTasks: number[];
    longTaskObserver?: PerformanceObserver;
  }
}

/**
 * The refusal's, the worked example's and N_packed 22,500's bounds are on the best of ROUNDS loads: a
 * task's duration is wall time, and on a 2-core machine shared with other work a 20 ms task is sometimes
 * descheduled past 100 ms; a page that does block (the 80 s freeze, a derivation on its thread) blocks in
 * every round. N_packed 1,000,000's bound holds in every load (BIG_BOUND).
 */
const ROUNDS = 5;
/** Loads of the million-node rollout, then of the one at the default limit (each takes seconds to tens of seconds on a loaded 2-core machine). */
const BIG_ROUNDS = 2;
/** N_packed 22,500: no task of 100 ms in the best load (on a quiet machine every load after the first: 0 ms). */
const MID_BOUND = 100;
/**
 * N_packed 1,000,000 and 1,999,396 (the default limit), in every load, the first included. The page takes the
 * worker's answer in parts (a task each), puts the view together in another, then updates the store; each
 * context pane and then the tree panel take the view one per task (viewStage), the panes hold only their
 * visible lines and never force a layout to measure them, and the packed mask counts its pixels in slices.
 * On a quiet machine no load's longest task reaches 100 ms (0–81 ms; docs/reliability.md has the
 * figures); a loaded 2-core machine deschedules tasks past it, so each load is bounded at 300 ms here,
 * which a page that does block (the 80 s freeze, a derivation or a forced layout of the whole tree's
 * text on its thread) exceeds in every load.
 */
const BIG_BOUND = 300;

/** The longest main-thread task (ms) since watchLongTasks, once any task still running has reported. */
async function longestTask(page: import('@playwright/test').Page): Promise<number> {
  await page.waitForTimeout(300);
  return Math.round(Math.max(0, ...(await page.evaluate(() => window.longTasks))));
}

/** From here on, every main-thread task over 50 ms is recorded in window.longTasks. */
async function watchLongTasks(page: import('@playwright/test').Page): Promise<void> {
  await page.evaluate(() => {
    window.longTasks = [];
    if (window.longTaskObserver) return;
    window.longTaskObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
    });
    window.longTaskObserver.observe({ type: 'longtask' });
  });
}

test('the 2,000-edit rollout is refused with N_packed and the limit, the main thread never blocked for 100 ms', async ({ page }) => {
  // From a path: the browser reads the file itself (a buffer would be built by script on the page's own thread).
  const dir = mkdtempSync(join(tmpdir(), 'mw-e2e-size-'));
  const text = evictingRollout(2000);
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  const before = await page.getByTestId('rollout-id').textContent();
  await page.waitForTimeout(2000); // start-up's own work (the first example's views) done
  const longest: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const file = join(dir, `evict-${round}.json`);
    writeFileSync(file, text);
    await watchLongTasks(page);
    const started = Date.now();
    await page.getByTestId('rollout-file-input').setInputFiles(file);
    // Waited for by a light poll of the page (Playwright's own text matching runs long tasks of its own on the page's thread).
    await page.waitForFunction((name) => document.querySelector('[data-testid=load-error]')?.textContent?.startsWith(name), `evict-${round}.json`, {
      polling: 200,
      timeout: 30_000,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    longest.push(await longestTask(page));
  }
  console.log(`refused, longest main-thread task of each round (ms): ${JSON.stringify(longest)}`);
  expect(Math.min(...longest), `longest main-thread task (ms) of each round: ${JSON.stringify(longest)}`).toBeLessThan(100);
  await expect(page.getByTestId('load-error')).toHaveText(
    `evict-${ROUNDS}.json: rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows (its tree would hold that many nodes; raise "largest tree" in the load bar to show it)`,
  );
  await expect(page.getByTestId('rollout-id')).toHaveText(before ?? '');

  // The limit is the page's setting: below the worked example's 21 nodes, it is refused too.
  await page.getByTestId('max-packed').fill('20');
  await page.getByTestId('example-worked-example').click();
  await expect(page.getByTestId('load-error')).toContainText('N_packed 21 is above the limit of 20 rows');
});

test('under the limit a rollout is derived in the worker and shown whole, after "Deriving the conditioning tree…"', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'mw-e2e-size-'));
  const worked = readFileSync('public/examples/worked-example.json', 'utf8');
  const mid = join(dir, 'mid.json');
  writeFileSync(mid, evictingRollout(150, 'mid'));
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await page.waitForTimeout(2000);

  // The worked example again, from a file: its derivation is the worker's, the page only shows it.
  const longest: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const id = `worked-copy-${round}`;
    const small = join(dir, `${id}.json`);
    writeFileSync(small, worked.replace('"worked-example"', `"${id}"`));
    await watchLongTasks(page);
    await page.getByTestId('rollout-file-input').setInputFiles(small);
    await page.waitForFunction((id) => document.querySelector('[data-testid=rollout-id]')?.textContent === id, id, { polling: 200 });
    longest.push(await longestTask(page));
  }
  console.log(`worked example, longest main-thread task of each round (ms): ${JSON.stringify(longest)}`);
  expect(Math.min(...longest), `longest main-thread task (ms) of each round: ${JSON.stringify(longest)}`).toBeLessThan(100);

  // A mid-size rollout (N_packed 22,500): while the worker derives, the progress line and the worked example, whole.
  await page.evaluate(() => {
    (window as unknown as { seen: string[] }).seen = [];
    new MutationObserver(() => {
      const progress = document.querySelector('[data-testid=load-progress]')?.textContent ?? '';
      const id = document.querySelector('[data-testid=rollout-id]')?.textContent ?? '';
      const seen = (window as unknown as { seen: string[] }).seen;
      const now = `${id} | ${progress}`;
      if (seen[seen.length - 1] !== now) seen.push(now);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await watchLongTasks(page);
  await page.getByTestId('rollout-file-input').setInputFiles(mid);
  await page.waitForFunction(() => document.querySelector('[data-testid=rollout-id]')?.textContent === 'mid', null, { polling: 200, timeout: 60_000 });
  await page.waitForTimeout(1000);
  const tasks = await page.evaluate(() => window.longTasks.map(Math.round));
  const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
  console.log(`mid-size rollout (drawn, not derived, on the page): main-thread tasks over 50 ms: ${JSON.stringify(tasks)}`);
  expect(seen).toContain(`worked-copy-${ROUNDS} | Deriving the conditioning tree…`);
  // The id changes once, to a rollout whose views are all there: never the new id beside a progress line.
  expect(seen.filter((s) => s.startsWith('mid')).every((s) => !s.includes('Deriving'))).toBe(true);
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  await expect(page.getByTestId('stat-packedLength')).toHaveText('22500');
});

/**
 * Loads `rounds` copies of a rollout (ids `${id}-1` ..), each after the one before is shown, and returns
 * the longest main-thread task of each load, from the file input until a second after the summary shows it.
 */
async function loadRounds(page: import('@playwright/test').Page, dir: string, text: string, id: string, rounds: number, timeout: number): Promise<number[]> {
  const longest: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const name = `${id}-${round}`;
    const file = join(dir, `${name}.json`);
    writeFileSync(file, text.replace(`"id":"${id}"`, `"id":"${name}"`));
    await watchLongTasks(page);
    await page.getByTestId('rollout-file-input').setInputFiles(file);
    await page.waitForFunction((name) => document.querySelector('[data-testid=rollout-id]')?.textContent === name, name, { polling: 200, timeout });
    await page.waitForTimeout(1000); // the views' draws after the summary (one per task)
    longest.push(await longestTask(page));
  }
  return longest;
}

test('large trees under the limit are drawn without freezing the page: N_packed 22,500, 1,000,000 and 1,999,396', async ({ page }, testInfo) => {
  test.setTimeout(600_000);
  const dir = mkdtempSync(join(tmpdir(), 'mw-e2e-size-'));
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-example');
  await page.waitForTimeout(2000);

  // (a) 150 edits: N_packed 22,500.
  const mid = await loadRounds(page, dir, evictingRollout(150, 'mid'), 'mid', ROUNDS, 60_000);
  console.log(`N_packed 22,500, longest main-thread task of each round (ms): ${JSON.stringify(mid)}`);
  await expect(page.getByTestId('stat-packedLength')).toHaveText('22500');
  expect(Math.min(...mid), `longest main-thread task (ms) of each round: ${JSON.stringify(mid)}`).toBeLessThan(MID_BOUND);

  // (b) 1,000 edits: N_packed 1,000,000, half the default limit.
  const big = await loadRounds(page, dir, evictingRollout(1000, 'big'), 'big', BIG_ROUNDS, 240_000);
  console.log(`N_packed 1,000,000, longest main-thread task of each round (ms): ${JSON.stringify(big)}`);
  await expect(page.getByTestId('stat-packedLength')).toHaveText('1000000');
  await expect(page.getByTestId('mask-canvas-packed-4d')).toHaveAttribute('data-n', '1000000');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  // The pictures a person reads: the packed mask (a thousand branches of a thousand nodes, each one
  // block on the diagonal) and the tree, saved beside the test's results.
  for (const [name, locator] of [
    ['mask', page.locator('.mask-panel')],
    ['tree', page.locator('.tree-panel')],
  ] as const) {
    await locator.scrollIntoViewIfNeeded();
    await locator.screenshot({ path: testInfo.outputPath(`big-${name}.png`) });
    console.log(`screenshot: ${testInfo.outputPath(`big-${name}.png`)}`);
  }
  // The packed mask is not blank: its canvas holds lit pixels along the diagonal (aggregated, not sampled).
  const lit = await page.getByTestId('mask-canvas-packed-4d').evaluate((canvas: HTMLCanvasElement) => {
    const ctx = canvas.getContext('2d')!;
    const left = Number(canvas.dataset.plotLeft) * devicePixelRatio;
    const top = Number(canvas.dataset.plotTop) * devicePixelRatio;
    const side = Math.min(canvas.width - left, canvas.height - top) - 20;
    let diagonal = 0;
    for (let t = 2; t < side; t += 4) {
      const [r, g, b] = ctx.getImageData(left + t, top + t, 1, 1).data;
      if (r + g + b > 3 * 0x30) diagonal++;
    }
    return { diagonal, samples: Math.floor((side - 2) / 4) };
  });
  expect(lit.diagonal, JSON.stringify(lit)).toBeGreaterThan(lit.samples * 0.9);
  // Every load, not the best of several: the first million-node load after the smaller ones included.
  expect(Math.max(...big), `longest main-thread task (ms) of each round: ${JSON.stringify(big)}`).toBeLessThan(BIG_BOUND);

  // (c) 1,414 edits: N_packed 1,999,396, just under the default limit of 2,000,000, derived and shown.
  const limit = await loadRounds(page, dir, evictingRollout(1414, 'limit'), 'limit', BIG_ROUNDS, 240_000);
  console.log(`N_packed 1,999,396, longest main-thread task of each round (ms): ${JSON.stringify(limit)}`);
  await expect(page.getByTestId('stat-packedLength')).toHaveText('1999396');
  await expect(page.getByTestId('mask-canvas-packed-4d')).toHaveAttribute('data-n', '1999396');
  await expect(page.getByTestId('load-error')).toHaveCount(0);
  expect(Math.max(...limit), `longest main-thread task (ms) of each round: ${JSON.stringify(limit)}`).toBeLessThan(BIG_BOUND);
});
