// Shared end-to-end fixtures: every page is offline (any request outside 127.0.0.1 is blocked
// and fails the test) and has no console errors.
import { test as base, expect } from '@playwright/test';

export interface PageGuards {
  consoleErrors: string[];
  externalRequests: string[];
}

export const test = base.extend<{ guards: PageGuards }>({
  guards: [
    async ({ page }, use) => {
      const guards: PageGuards = { consoleErrors: [], externalRequests: [] };
      page.on('console', (msg) => {
        if (msg.type() === 'error') guards.consoleErrors.push(msg.text());
      });
      page.on('pageerror', (err) => guards.consoleErrors.push(String(err)));
      await page.route('**/*', (route) => {
        const url = new URL(route.request().url());
        const local = url.hostname === '127.0.0.1' || url.protocol === 'data:' || url.protocol === 'blob:';
        if (local) return route.continue();
        guards.externalRequests.push(route.request().url());
        return route.abort('blockedbyclient');
      });
      await use(guards);
      expect(guards.externalRequests, 'requests outside 127.0.0.1').toEqual([]);
      expect(guards.consoleErrors, 'console errors').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };
