// "The paper's claim" (issue 20): one click starts Naive-Compressed, Naive-Full, the packed 4D mask
// and SDCC side by side from the weak start, and the held-out EM chart draws the shipped results of
// `mw experiment learning` dashed under the live lines, until every lane has its first point.
import { readFileSync } from 'node:fs';
import { test, expect } from './fixtures';
import { PAPER_CLAIM, WEAK_MODEL } from '../src/run/config';
import { referencePhase, type ReferenceCurves } from '../src/run/reference';

const SHIPPED = JSON.parse(readFileSync(new URL('../docs/experiments/learning/reference.json', import.meta.url), 'utf8')) as ReferenceCurves;

test("The paper's claim: four lanes from the weak start, each with a held-out EM point beside the experiment's dashed curves", async ({ page }) => {
  test.setTimeout(900_000);
  await page.goto('/');
  await page.getByTestId('train-panel-toggle').click();
  await expect(page.getByTestId('train-status')).toHaveAttribute('data-phase', 'idle');
  await page.getByTestId('config-paper-claim').click();
  await expect(page.getByTestId('train-status')).toHaveAttribute('data-phase', /preparing|running/);

  // The preset's run: the weak start, its task, the window editor, four lanes, SFT at the preset's rate.
  await expect(page.getByTestId('config-model')).toHaveValue(`ckpt:${WEAK_MODEL.name}`);
  await expect(page.getByTestId('config-env')).toHaveValue('collect');
  await expect(page.getByTestId('config-distractors')).toHaveValue('1');
  await expect(page.getByTestId('config-editor')).toHaveValue('window');
  await expect(page.getByTestId('config-lr')).toHaveValue(String(PAPER_CLAIM.lr));
  await expect(page.getByTestId('config-objective-sft')).toHaveAttribute('aria-pressed', 'true');
  for (const m of ['naive-compressed', 'naive-full', 'packed-4d', 'sdcc'])
    await expect(page.getByTestId(`config-method-${m}`)).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByTestId('config-method-logit-tree')).toHaveAttribute('aria-pressed', 'false');

  // The shipped experiment has this very run among its phases: its curves are drawn before the first live point.
  const phase = referencePhase({ ...(await currentConfig(page)) }, SHIPPED)!;
  expect(phase, 'the shipped reference.json has the preset’s phase').not.toBeNull();
  const chart = page.getByTestId('chart-reward');
  const canvas = chart.locator('canvas');
  await expect(canvas).toHaveAttribute('data-references', '4');
  const referencePoints = phase.curves.filter((c) => PAPER_CLAIM.methods.includes(c.method as never)).reduce((n, c) => n + c.points.length, 0);
  await expect(canvas).toHaveAttribute('data-reference-points', String(referencePoints));
  await expect(page.getByTestId('chart-reference-reward')).toContainText(`mean over ${phase.seeds.length} seeds`);

  // Every lane's first held-out evaluation (after evalEvery steps).
  await expect
    .poll(
      async () => {
        const values = await Promise.all(PAPER_CLAIM.methods.map((m) => page.getByTestId(`metric-heldout-${m}`).getAttribute('data-value')));
        return values.filter((v) => v !== null && v !== '').length;
      },
      { timeout: 840_000, intervals: [1000], message: 'every lane has a held-out EM point' },
    )
    .toBe(4);
  for (const m of PAPER_CLAIM.methods) {
    const em = Number(await page.getByTestId(`metric-heldout-${m}`).getAttribute('data-value'));
    expect(em >= 0 && em <= 1 && Number.isInteger(Math.round(em * PAPER_CLAIM.evalPrompts * 1e6) / 1e6), `${m} EM ${em}`).toBe(true);
  }
  expect(Number(await canvas.getAttribute('data-points'))).toBeGreaterThanOrEqual(4);
  await expect(canvas).toHaveAttribute('data-references', '4');
  await page.getByTestId('train-pause').click();
  await expect(page.getByTestId('train-status')).toHaveAttribute('data-phase', 'paused', { timeout: 120_000 });

  // Without a run the dashed curves follow the draft: a lane toggled off loses its curve at once.
  // Reset asks first: the run has made steps.
  const asked = new Promise<string>((resolve) => page.once('dialog', (d) => void d.accept().then(() => resolve(d.message()))));
  await page.getByTestId('train-reset').click();
  expect(await asked).toMatch(/^End this run at step \d+ of 20 and forget it\?/);
  await expect(page.getByTestId('train-status')).toHaveAttribute('data-phase', 'idle');
  await expect(canvas).toHaveAttribute('data-references', '4');
  await page.getByTestId('config-method-naive-full').click();
  await expect(page.getByTestId('config-method-naive-full')).toHaveAttribute('aria-pressed', 'false');
  await expect(canvas).toHaveAttribute('data-references', '3');
});

/** The draft config as the page's link carries it (the fragment follows the config). */
async function currentConfig(page: import('@playwright/test').Page) {
  const { parseRunFragment } = await import('../src/app/train/urlSchema');
  await expect.poll(() => new URL(page.url()).hash).toContain('ckpt=weak.safetensors');
  return parseRunFragment(new URL(page.url()).hash)!;
}
