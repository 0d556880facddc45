#!/usr/bin/env node
// The `mw` command line: TypeScript sources run through tsx, shaders load through the ?raw hook.
import '../scripts/register.mjs';

// A reader that stops early (`mw tree --json | head`) closes the pipe: stop quietly, as Unix tools
// do, instead of dying on the EPIPE with a stack trace.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
