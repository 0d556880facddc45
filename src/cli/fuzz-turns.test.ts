// `mw` fuzz, trainer dumps (`mw import --from turns`) (the harness: fuzz.testing.ts).

import { join } from 'node:path';
import { type Case, TMP, deepArray, file, fuzzFamily } from './fuzz.testing';

/** Trainer dumps (`mw import --from turns`): one record per model call, in token space. */
function turnsCases(): Case[] {
  const turn = (fields: string) => `{"prompt_ids":[10,11],"response_ids":[20,21],"trajectory_ids":"q"${fields}}\n`;
  const bad: [string, string, RegExp][] = [
    ['nesting', `{"prompt_ids":[1],"response_ids":[${deepArray(50_000)}],"trajectory_ids":"q"}\n`, /:1: response_ids\[0\] = \[\[\[.* is not a token id/],
    ['huge id', turn('').replace('[10,11]', '[1e308]'), /:1: prompt_ids\[0\] = 1e\+308 is not a token id \(an integer in \[0, 2147483647\)\)$/],
    ['negative id', turn('').replace('[10,11]', '[-1]'), /:1: prompt_ids\[0\] = -1 is not a token id/],
    ['fractional id', turn('').replace('[20,21]', '[2.5]'), /:1: response_ids\[0\] = 2\.5 is not a token id/],
    ['infinite logprob', turn(',"rollout_logprobs":[-1e999,-1]'), /:1: rollout_logprobs\[0\] = -Infinity is not a finite number <= 0$/],
    ['positive logprob', turn(',"rollout_logprobs":[0.5,-1]'), /:1: rollout_logprobs\[0\] = 0\.5 is not a finite number <= 0$/],
    ['huge vocabulary', turn(',"vocab_size":1e300'), /:1: vocab_size must be an integer in \[1, 2147483647\], got 1e\+300$/],
    ['a token outside its vocabulary', turn(',"vocab_size":15'), /:1: token id 21 is outside the vocabulary of 15$/],
    ['a record that is not an object', `${turn('')}[1,2]\n`, /:2: expected a turn record/],
    ['invalid JSON on line 2', `${turn('')}{"prompt_ids":[1\n`, /:2: invalid JSON/],
  ];
  const cases: Case[] = bad.map(([name, text, line], i) => ({
    family: `turns: ${name}`,
    args: ['import', file(`turns-${i}.jsonl`, text), '--from', 'turns', '--out', join(TMP, `turns-${i}.out.jsonl`)],
    code: 2,
    line,
  }));
  const bom = file('turns-bom.jsonl', `\ufeff${turn('')}`);
  const proto = file('turns-proto.jsonl', turn(',"__proto__":{"polluted":true}'));
  const rewards = file('turns-rewards.jsonl', turn(',"rewards":[1.7e308]'));
  for (const [name, path] of [
    ['BOM', bom],
    ['__proto__', proto],
    ['reward 1.7e308', rewards],
  ]) {
    cases.push({ family: `turns: ${name}`, args: ['import', path, '--out', join(TMP, `${name.replace(/\W/g, '')}.out.jsonl`)], code: 0 });
  }
  cases.push({
    family: 'turns: mw export of a bad dump',
    args: ['export', join(TMP, 'turns-1.jsonl'), '--method', 'sdcc', '--out', join(TMP, 'turns.safetensors')],
    code: 2,
    line: /turns-1\.jsonl:1: prompt_ids\[0\] = 1e\+308/,
  });
  return cases;
}

fuzzFamily('turn dumps', turnsCases, (f) => /^turns-\d+\.out/.test(f));
