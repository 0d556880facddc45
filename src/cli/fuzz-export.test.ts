// `mw` fuzz, export: bad files, paths and --max-tokens (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { WORKED } from './subprocess.testing';
import { type Case, TMP, aFolder, file, fuzzFamily, withDeepEvent, worked } from './fuzz.testing';

function exportCases(): Case[] {
  const out = join(TMP, 'batch.safetensors');
  const deep = file('deep-5000.json', withDeepEvent(JSON.stringify(worked()), 5000));
  const folder = aFolder();
  return [
    { family: 'export: nesting', args: ['export', deep, '--method', 'packed-4d', '--out', out], code: 2, line: /deep-5000\.json: / },
    {
      family: 'export: missing file',
      args: ['export', join(TMP, 'nope.jsonl'), '--method', 'sdcc', '--out', out],
      code: 2,
      line: /nope\.jsonl: no such file$/,
    },
    {
      family: 'export: --out in a missing folder',
      args: ['export', WORKED, '--method', 'sdcc', '--out', join(TMP, 'no-such-folder', 'b.safetensors')],
      code: 1,
      line: /^mw export: --out .*: folder .* does not exist/,
    },
    {
      family: 'export: --out onto a folder',
      args: ['export', WORKED, '--method', 'sdcc', '--out', folder],
      code: 1,
      line: /^mw export: --out .* is a folder/,
    },
    ...['0', 'abc', '1e400', '=-5'].map(
      (n): Case => ({
        family: `export: --max-tokens ${n}`,
        args: ['export', WORKED, '--method', 'sdcc', '--out', out, ...(n.startsWith('=') ? [`--max-tokens${n}`] : ['--max-tokens', n])],
        code: 1,
        line: /^mw export: --max-tokens must be an integer ≥ 1/,
      }),
    ),
    {
      family: 'export: --max-tokens -5',
      args: ['export', WORKED, '--method', 'sdcc', '--out', out, '--max-tokens', '-5'],
      code: 1,
      line: /^mw export: Option '--max-tokens' argument is ambiguous\. .* use '--max-tokens=-XYZ'/,
    },
    {
      family: 'export: a packed sequence over --max-tokens',
      args: ['export', WORKED, '--method', 'packed-4d', '--out', out, '--max-tokens', '10'],
      code: 2,
      line: /a packed-4d sequence of 21 rows does not fit --max-tokens 10/,
    },
  ];
}

fuzzFamily('export', exportCases, (f) => f === 'batch.safetensors');
