// The test run's `mw`: src/cli bundled once into one ES module (esbuild, the bundler Vite ships), so the
// hundreds of `mw` subprocesses the tiers start skip the TypeScript transform of ~300 files each
// (about 0.9 s of CPU a start). It behaves as bin/mw.js does (same main, the same EPIPE rule) and, like
// src/cli/measured.testing.ts, writes its peak resident memory to $MW_RSS_FILE when that is set.
// `npm test` builds it into .reports/mw.mjs and hands it to the tiers as MW_CLI; a test run on its own
// (npx vitest …) has no MW_CLI and runs bin/mw.js. Shaders load as text (the ?raw hook's job), every
// package stays external (resolved from node_modules at run time), and import.meta.url keeps naming the
// source file, so paths relative to a module mean what they mean when it runs from source.
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const ENTRY = `
import { writeFileSync } from 'node:fs';
import { main } from './src/cli/main.ts';
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});
process.on('exit', () => {
  if (process.env.MW_RSS_FILE) writeFileSync(process.env.MW_RSS_FILE, String(process.resourceUsage().maxRSS));
});
process.exitCode = await main(process.argv.slice(2));
`;

const sources = {
  name: 'mw-sources',
  setup(b) {
    b.onResolve({ filter: /\?raw$/ }, (args) => ({ path: resolve(args.resolveDir, args.path.slice(0, -4)), namespace: 'raw' }));
    b.onLoad({ filter: /.*/, namespace: 'raw' }, async (args) => ({ contents: await readFile(args.path, 'utf8'), loader: 'text' }));
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

/** Builds the bundle at `out` (absolute or relative to the repository); resolves with its path. */
export async function buildCliBundle(out = '.reports/mw.mjs') {
  const outfile = resolve(ROOT, out);
  await build({
    stdin: { contents: ENTRY, resolveDir: ROOT, sourcefile: 'mw-entry.ts', loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile,
    plugins: [sources],
    logLevel: 'error',
  });
  return outfile;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await buildCliBundle(process.argv[2]));
