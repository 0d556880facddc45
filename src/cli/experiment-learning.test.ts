// `mw experiment learning`'s flags, checked before the model loads or the GPU starts: a partial
// --env filled from the environment's defaults (as matrix builds it), the editors and methods
// refused with the valid choices, a bad --out refused as a usage error.

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { phaseRunConfig } from '../experiments/learning';
import { learningConfigFromArgs } from './experiment-learning';
import { mw, tmpDir, WORKED } from './subprocess.testing';

const TMP = tmpDir('experiment-learning');

describe('mw experiment learning flags', () => {
  it('fills a partial --env from the environment defaults, so every run config sets each knob', () => {
    const collect = learningConfigFromArgs({ positionals: ['learning'], flags: { env: 'collect:pages=2', quick: true } }, 'weak.safetensors');
    expect(collect.env).toEqual({ id: 'collect', pages: 2, decoys: 2, filler: 40 });
    const run = phaseRunConfig(collect, 'rl', collect.editors[0], 1, collect.methods, 0.1);
    expect(run).toMatchObject({ env: 'collect', difficulty: 2, distractors: 2, filler: 40 });
    const lookup = learningConfigFromArgs({ positionals: ['learning'], flags: { env: 'lookup:filler=0' } }, 'weak.safetensors');
    expect(lookup.env).toEqual({ id: 'lookup', hops: 3, distractors: 2, filler: 0 });
    expect(phaseRunConfig(lookup, 'sft', lookup.editors[0], 1, lookup.methods, 0.1)).toMatchObject({ env: 'lookup', difficulty: 3, distractors: 2, filler: 0 });
  });

  it('refuses an --env knob the run config cannot carry or range it cannot hold (usage error)', () => {
    const config = (env: string) => () => learningConfigFromArgs({ positionals: ['learning'], flags: { env } }, 'weak.safetensors');
    expect(config('collect:pool=12')).toThrow(/^--env: the learning runs train the app's run config, which sets no pool \(collect: pages, decoys, filler\)$/);
    expect(config('lookup:names=30')).toThrow(
      /^--env: the learning runs train the app's run config, which sets no names \(lookup: hops, distractors, filler\)$/,
    );
    expect(config('collect:pages=12')).toThrow(/^the sft runs' config under window: difficulty must be an integer in \[1, 8\] \(got 12\)$/);
  });

  it('refuses bad --editors, --methods and --out before any work (exit 1, one line)', async () => {
    const out = join(TMP, 'out');
    const runs = await Promise.all([
      mw(['experiment', 'learning', '--out', out, '--editors', 'window,zip']),
      mw(['experiment', 'learning', '--out', out, '--methods', 'sdcc,bogus']),
      mw(['experiment', 'learning', '--out', WORKED, '--quick']),
      mw(['experiment', 'learning', '--out', join(WORKED, 'sub'), '--quick']),
    ]);
    for (const run of runs) expect(run).toMatchObject({ code: 1, stdout: '' });
    expect(runs[0].stderr).toBe(`mw experiment: unknown --editors entry "zip" (none, window, compact, stack, fold) (see 'mw experiment --help')\n`);
    expect(runs[1].stderr).toBe(
      `mw experiment: unknown --methods entry "bogus" (naive-compressed, naive-full, logit-tree, packed-4d, sdcc) (see 'mw experiment --help')\n`,
    );
    expect(runs[2].stderr).toMatch(/^mw experiment: --out .* is a file; give a folder \(see 'mw experiment --help'\)\n$/);
    expect(runs[3].stderr).toMatch(/^mw experiment: --out .*: a folder on its path is a file \(see 'mw experiment --help'\)\n$/);
  });
});
