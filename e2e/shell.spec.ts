import { test, expect } from './fixtures';

test('the page loads and reports the SwiftShader WebGPU adapter', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('MemoryWalker Workbench');
  const adapter = page.getByTestId('gpu-adapter');
  await expect(adapter).toHaveAttribute('data-status', 'ready');
  await expect(adapter).toContainText(/swiftshader/i);
});

test('the start command serves the workbench, and a screenshot shows the adapter line', async ({ page }, testInfo) => {
  const { START_PORT } = await import('../playwright.config');
  await page.goto(`http://127.0.0.1:${START_PORT}/`);
  const adapter = page.getByTestId('gpu-adapter');
  await expect(adapter).toHaveAttribute('data-status', 'ready');
  await expect(adapter).toContainText(/WebGPU: google \/ swiftshader/i);
  const shot = await page.screenshot({ path: testInfo.outputPath('start.png') });
  expect(shot.byteLength).toBeGreaterThan(1000);
});
