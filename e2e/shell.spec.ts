import { test, expect } from './fixtures';

test('the page loads and reports the SwiftShader WebGPU adapter', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('MemoryWalker Workbench');
  const adapter = page.getByTestId('gpu-adapter');
  await expect(adapter).toHaveAttribute('data-status', 'ready');
  await expect(adapter).toContainText(/swiftshader/i);
});
