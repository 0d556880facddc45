// `mw` as bin/mw.js runs it, plus its peak resident memory: on exit the process writes
// process.resourceUsage().maxRSS (KB) to $MW_RSS_FILE. For the fuzz suite's 500 MB bound and the
// import benchmark; run as `node --import ./scripts/register.mjs src/cli/measured.testing.ts ARGS`.

import { writeFileSync } from 'node:fs';
import { main } from './main';

process.on('exit', () => {
  if (process.env.MW_RSS_FILE) writeFileSync(process.env.MW_RSS_FILE, String(process.resourceUsage().maxRSS));
});
process.exitCode = await main(process.argv.slice(2));
