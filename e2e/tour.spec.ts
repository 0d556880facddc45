// The guided tour end to end (issue 18): from ?tour=1, Next through every step to the last with each
// caption shown, each highlight on the page and, on the worked example in words (issue 30), the figures
// and words each caption cites read off the inspector and the summary; a step opened by its URL; Back, Escape; without
// WebGPU it stops at the first step that needs it and says why; the first-visit offer.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../scripts/chromium';
import type { DriftOutput } from '../src/cli/drift';
import { TOUR_STEPS, firstGpuStep } from '../src/app/core/tourSteps';
import { test, expect } from './fixtures';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The test run's mw: the bundle `npm test` builds (MW_CLI, the same main), else bin/mw.js. */
const MW = process.env.MW_CLI ? resolve(ROOT, process.env.MW_CLI) : join(ROOT, 'bin/mw.js');

/** `mw drift --json` of the demo model on the first rollout of the drift step's example, as a user runs it. */
function cliJunctions(): DriftOutput['junctions'] {
  const first = readFileSync(join(ROOT, 'public/examples/demo-window.jsonl'), 'utf8').split('\n')[0];
  const file = join(mkdtempSync(join(tmpdir(), 'mw-tour-')), 'first.jsonl');
  writeFileSync(file, `${first}\n`);
  const args = [MW, 'drift', '--ckpt', join(ROOT, 'public/models/demo.safetensors'), '--rollouts', file, '--json'];
  return (JSON.parse(execFileSync(process.execPath, args, { cwd: ROOT, maxBuffer: 1 << 26 }).toString()) as DriftOutput).junctions;
}

/** The caption's text as the page shows it: Markdown links as their words. */
const shown = (caption: string) => caption.replace(/\[([^\]]+)\]\([^)]+\)/g, '$1');

async function expectStep(page: Page, n: number) {
  const tour = page.getByTestId('tour');
  await expect(tour).toHaveAttribute('data-step', String(n));
  await expect(tour).not.toHaveAttribute('data-busy', /.+/, { timeout: 120_000 });
  await expect(page).toHaveURL(new RegExp(`[?&]tour=${n}\\b`));
  const step = TOUR_STEPS[n - 1];
  await expect(page.getByTestId('tour-title')).toContainText(step.title);
  await expect(page.getByTestId('tour-caption')).toBeVisible();
  await expect(page.getByTestId('tour-caption')).toHaveText(shown(step.caption));
  // Every highlight stands on the page, ringed.
  for (let i = 0; i < step.highlight.length; i++) {
    await expect(page.locator(`[data-tour-ring="${i}"]`).first(), `step ${n}, highlight ${JSON.stringify(step.highlight[i])}`).toBeAttached();
    const h = step.highlight[i];
    if (typeof h === 'string') await expect(page.locator(h).first()).toBeVisible();
  }
}

/** A method's row of the inspector's table: prefix, missing, stale, future (td 2–5). */
const methodCell = (page: Page, method: string, column: 'prefix' | 'missing' | 'stale' | 'future') =>
  page.locator(`[data-testid="method-table"] tr[data-method="${method}"] td`).nth(['prefix', 'missing', 'stale', 'future'].indexOf(column) + 1);

/** Steps 1–8 on the worked example in words: the figures and words each caption cites, read off the inspector and the summary. */
async function expectCitedFigures(page: Page, n: number) {
  const stat = (id: string) => page.getByTestId(`stat-${id}`);
  const target = page.getByTestId('inspector-target');
  const token = page.getByTestId('inspector-token');
  switch (n) {
    case 1: // 2 edits, 17 tokens, 8 targets; target 13 is the word “add”
      await expect(page.getByTestId('tour-readout')).toHaveText('This rollout: 2 edits, 17 tokens created, 8 of them written by the policy.');
      await expect(stat('K')).toHaveText('2');
      await expect(stat('physicalLength')).toHaveText('17');
      await expect(stat('targets')).toHaveText('8');
      await expect(target).toHaveText('13');
      await expect(token).toContainText('add');
      break;
    case 2:
      await expect(target).toHaveText('13');
      await expect(token).toContainText('add');
      break;
    case 3: // K = 2 edits, K + 1 = 3 branches
      await expect(stat('K')).toHaveText('2');
      await expect(stat('branches')).toHaveText('3');
      break;
    case 4: // live prefix 0 1 9 10 7 8 11 12: 8 ids, “Fix tests parser broken open parser missing comma”
      await expect(target).toHaveText('13');
      await expect(page.locator('[data-tour="fact-live-prefix"] dd')).toHaveText('8');
      await expect(page.getByTestId('pane-live')).toHaveAttribute('data-tokens', '8');
      await expect(methodCell(page, 'logit-tree', 'prefix')).toHaveText('8');
      break;
    case 5: // eviction mass 4; Naive-Compressed misses those 4 ids; the dropped targets 2, 3, 7, 8
      await expect(target).toHaveText('13');
      await expect(page.getByTestId('inspector-evictionMass')).toHaveText('4');
      await expect(methodCell(page, 'naive-compressed', 'missing')).toHaveText('4');
      await expect(stat('droppedTargets')).toHaveText('4');
      break;
    case 6: // target 15, “run”: Naive-Full shows 9 stale ids
      await expect(target).toHaveText('15');
      await expect(token).toContainText('run');
      await expect(methodCell(page, 'naive-full', 'stale')).toHaveText('9');
      break;
    case 7: // N_packed 21 over N_final 8
      await expect(stat('packedLength')).toHaveText('21');
      await expect(stat('finalWalkLength')).toHaveText('8');
      await expect(page.getByTestId('tour-readout')).toHaveText('N_packed = 21, N_final = 8: one forward over 2.63× the final walk, instead of 3 forwards.');
      break;
    case 8: // D = 2: targets 13 and 14 diverge, 15 does not
      await expect(stat('divergingLeaves')).toHaveText('2');
      await expect(target).toHaveText('13');
      await expect(page.getByTestId('inspector-diverging')).toHaveText(/yes/);
      break;
  }
}

test('from ?tour=1, Next walks every step to the last: captions, highlights, the figures they cite, the URL, no console error', async ({ page }) => {
  await page.goto('/?tour=1');
  await expectStep(page, 1);
  await expect(page.getByTestId('rollout-id')).toHaveText('worked-words');
  await expect(page.getByTestId('source')).toContainText('worked-words');
  await expectCitedFigures(page, 1);
  for (let n = 2; n <= TOUR_STEPS.length; n++) {
    await page.getByTestId('tour-next').click();
    await expectStep(page, n);
    await expectCitedFigures(page, n);
    if (n === 9) {
      // The demo model scored the rollout on WebGPU: the readout quotes each method's μ, the exact ones at the floor.
      await expect(page.getByTestId('tour-readout')).toContainText('μ vs live on this rollout', { timeout: 120_000 });
      await expect(page.getByTestId('tour-readout')).toContainText('LogitTree 0 (at the floor)');
      await expect(page.getByTestId('tour-readout')).toContainText(/Packed 4D mask \S+ \(at the floor\)/);
      await expect(page.getByTestId('model-info')).toContainText('demo.safetensors');
      // The panel's verdict: the exact methods at the floor; drift per edit sorted by cost, a largest drift selects its target.
      await expect(page.getByTestId('verdict-logit-tree')).toHaveAttribute('data-state', 'at-floor');
      await expect(page.getByTestId('verdict-packed-4d')).toHaveAttribute('data-state', 'at-floor');
      await expect(page.getByTestId('drift-conclusion')).toContainText(/stay|moves|move|Every method/);
      const costs = await page
        .getByTestId('junction-table')
        .locator('tbody tr')
        .evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-cost'))));
      expect(costs.length).toBeGreaterThan(0);
      expect(costs).toEqual([...costs].sort((a, b) => b - a));
      // The same figures as mw drift's junctions on the same rollout and model (GPU float32 on both sides: within 2e-4).
      const shownRows = await page
        .getByTestId('junction-table')
        .locator('tbody tr')
        .evaluateAll((rows) =>
          rows.map((r) => ({
            edit: Number(r.getAttribute('data-edit')),
            cost: Number(r.getAttribute('data-cost')),
            mu: Object.fromEntries(Array.from(r.querySelectorAll('td[data-method]'), (td) => [td.getAttribute('data-method'), td.getAttribute('data-mu')])),
          })),
        );
      const cli = cliJunctions();
      expect(shownRows.map((r) => r.edit).sort()).toEqual(cli.map((j) => j.edit).sort());
      for (const j of cli) {
        const row = shownRows.find((r) => r.edit === j.edit)!;
        expect(Math.abs(row.cost - j.cost), `edit ${j.edit} cost`).toBeLessThan(2e-4);
        for (const [method, m] of Object.entries(j.methods)) {
          const shownMu = row.mu[method];
          if (m.mu === null || shownMu === undefined) continue;
          expect(Math.abs(Number(shownMu) - m.mu), `edit ${j.edit} ${method} μ`).toBeLessThan(2e-4);
        }
      }
      const first = page.getByTestId('junction-target').first();
      const target = await first.getAttribute('data-target');
      await first.click();
      await expect(page.getByTestId('inspector-target')).toHaveText(target!);
    }
  }
  await expect(page.getByTestId('tour-next')).toHaveCount(0);
  await expect(page.getByTestId('tour-done')).toBeVisible();
  await expect(page.locator('[data-testid="config-method-packed-4d"]')).toHaveAttribute('aria-pressed', 'true');
});

test('?tour=5 opens step 5 directly, Back returns to 4, arrow keys move, Escape leaves and drops tour from the URL', async ({ page }) => {
  await page.goto('/?tour=5');
  await expectStep(page, 5);
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await expect(page.locator('[data-testid="method-table"] tr[data-method="naive-compressed"]')).toHaveAttribute('aria-selected', 'true');
  await page.getByTestId('tour-back').click();
  await expectStep(page, 4);
  await page.keyboard.press('ArrowRight');
  await expectStep(page, 5);
  await page.keyboard.press('ArrowLeft');
  await expectStep(page, 4);
  // The arrows moved the tour, not the selected target.
  await expect(page.getByTestId('inspector-target')).toHaveText('13');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('tour')).toHaveCount(0);
  await expect(page.locator('[data-tour-ring]')).toHaveCount(0);
  await expect(page).not.toHaveURL(/[?&]tour=/);
  await expect(page).toHaveURL(/target=13/);
  // A tour taken (here from a link) answers the first-visit offer for good.
  await expect(page.getByTestId('tour-offer')).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await expect(page.getByTestId('tour-offer')).toHaveCount(0);
});

test('the first visit offers the tour in one line; dismissed, it stays dismissed', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('tour-offer')).toBeVisible();
  await page.getByTestId('tour-offer-dismiss').click();
  await expect(page.getByTestId('tour-offer')).toHaveCount(0);
  await page.reload();
  await expect(page.getByTestId('rollout-id')).toBeVisible();
  await expect(page.getByTestId('tour-offer')).toHaveCount(0);
  await page.getByTestId('tour-open').click();
  await expectStep(page, 1);
});

test('with classic scroll bars, the spotlight adds no horizontal scroll bar', async ({ baseURL }) => {
  // Playwright hides scroll bars in headless Chromium; a person's browser draws them (15 px), and the
  // spotlight, sized to the page's scrollWidth, was 15 px wider than the page inside the vertical bar.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, ignoreDefaultArgs: ['--hide-scrollbars'] });
  try {
    const page = await browser.newPage({ baseURL, viewport: { width: 1440, height: 900 } });
    await page.goto('/?tour=5');
    await expectStep(page, 5);
    const widths = () => page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth, window.innerWidth]);
    const [, client, inner] = await widths();
    expect(client).toBeLessThan(inner); // a vertical scroll bar is drawn
    await page.getByTestId('tour-back').click();
    await expectStep(page, 4);
    await page.waitForTimeout(700); // the rings are re-measured every 300 ms
    expect(await widths()).toEqual([client, client, inner]);
  } finally {
    await browser.close();
  }
});

test.describe('without WebGPU', () => {
  test('the tour runs up to the first step that needs WebGPU and says why it stops there', async ({ baseURL }) => {
    const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu') });
    try {
      const page = await browser.newPage({ baseURL, viewport: { width: 1440, height: 900 } });
      const errors: string[] = [];
      page.on('console', (msg) => msg.type() === 'error' && errors.push(msg.text()));
      page.on('pageerror', (err) => errors.push(String(err)));
      await page.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort('blockedbyclient')));
      await page.goto('/?tour=1');
      const stop = firstGpuStep()!;
      expect(stop).toBe(9);
      await expectStep(page, 1);
      for (let n = 2; n < stop; n++) {
        await page.keyboard.press('ArrowRight');
        await expectStep(page, n);
      }
      await page.getByTestId('tour-next').click();
      const tour = page.getByTestId('tour');
      await expect(tour).toHaveAttribute('data-step', String(stop));
      await expect(page.getByTestId('tour-blocked')).toContainText('This step runs on WebGPU, and this browser offers none');
      await expect(page.getByTestId('tour-blocked')).toContainText(`Steps 1–${stop - 1} need no GPU`);
      await expect(page.getByTestId('tour-next')).toBeDisabled();
      await page.keyboard.press('ArrowRight');
      await expect(tour).toHaveAttribute('data-step', String(stop));
      // A link to the last step says the same.
      await page.goto(`/?tour=${TOUR_STEPS.length}`);
      await expect(page.getByTestId('tour-blocked')).toBeVisible();
      expect(errors, 'console errors').toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
