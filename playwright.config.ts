// End-to-end tier: Debian's headless Chromium (never a downloaded browser) with WebGPU on
// SwiftShader, against the production build served on 127.0.0.1.
import { defineConfig } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './scripts/chromium';

const PORT = Number(process.env.MW_E2E_PORT ?? 4173);
/** The README's start command (`npm start`, Vite's dev server) is checked on its own port. */
export const START_PORT = PORT + 1000;

export default defineConfig({
  testDir: 'e2e',
  testMatch: '**/*.spec.ts',
  fullyParallel: false,
  workers: 1, // npm test runs two spec files at a time, then alone those whose figures are rates and durations (E2E_ALONE in scripts/test.mjs)
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    browserName: 'chromium',
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    viewport: { width: 1440, height: 900 },
  },
  webServer: [
    {
      command: `npx vite preview --host 127.0.0.1 --port ${PORT} --strictPort`,
      url: `http://127.0.0.1:${PORT}`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
    {
      command: 'npm start',
      env: { MW_PORT: String(START_PORT) },
      url: `http://127.0.0.1:${START_PORT}`,
      reuseExistingServer: false,
      timeout: 60_000,
    },
  ],
});
