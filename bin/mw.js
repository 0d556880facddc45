#!/usr/bin/env node
// The `mw` command line: TypeScript sources run through tsx, shaders load through the ?raw hook.
import '../scripts/register.mjs';

const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
