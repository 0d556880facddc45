// The rollout that froze the page for 80–137 s (issue 31): 211 KB whose 2,000 edits each evict one
// token, N_packed 4,000,000. Its N_packed is counted in the rollout worker from the events and the
// page refuses it above its "largest tree" limit before deriving anything: the message names the
// figure and the limit, the rollout shown before stays, and no task on the main thread takes 250 ms (the aim is 100 ms: idle,
// the longest task here is about 40–60 ms, but on a loaded 2-core machine one task reached 145–165 ms
// in 2 of 8 runs, with no app function above 46 ms in its profile; the freeze this guards against was 80 s).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evictingRollout } from '../src/testing/evicting';
import { expect, test } from './fixtures';

declare global {
  interface Window {
    longTasks: number[];
  }
}

test('the 2,000-edit rollout is refused with N_packed and the limit, the main thread never blocked for 250 ms', async ({ page }) => {
  // From a path: the browser reads the file itself (a buffer would be built by script on the page's own thread).
  const file = join(mkdtempSync(join(tmpdir(), 'mw-e2e-size-')), 'evict.json');
  writeFileSync(file, evictingRollout(2000));
  await page.goto('/');
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  const before = await page.getByTestId('rollout-id').textContent();
  await page.waitForTimeout(2000); // start-up's own work (the first example's views) done
  await page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.longTasks.push(entry.duration);
    }).observe({ type: 'longtask' });
  });
  const started = Date.now();
  await page.getByTestId('rollout-file-input').setInputFiles(file);
  // Waited for by a light poll of the page (Playwright's own text matching runs long tasks of its own on the page's thread).
  await page.waitForFunction(() => document.querySelector('[data-testid=load-error]')?.textContent?.includes('N_packed'), null, {
    polling: 200,
    timeout: 30_000,
  });
  expect(Date.now() - started).toBeLessThan(5000);
  await page.waitForTimeout(300); // any task still running reports
  const tasks = await page.evaluate(() => window.longTasks);
  expect(Math.max(0, ...tasks), `longest main-thread task (ms), of ${JSON.stringify(tasks.map(Math.round))}`).toBeLessThan(250);
  await expect(page.getByTestId('load-error')).toHaveText(
    'evict.json: rollout "evict": N_packed 4,000,000 is above the limit of 2,000,000 rows (its tree would hold that many nodes; raise "largest tree" in the load bar to show it)',
  );
  await expect(page.getByTestId('rollout-id')).toHaveText(before ?? '');

  // The limit is the page's setting: below the worked example's 21 nodes, it is refused too.
  await page.getByTestId('max-packed').fill('20');
  await page.getByTestId('example-worked-example').click();
  await expect(page.getByTestId('load-error')).toContainText('N_packed 21 is above the limit of 20 rows');
});
