// Bad input, fuzzed: thousands of mutated and truncated rollout files. Each either loads (and
// then derives and plans without error) or raises the typed ValidationError with a one-line
// `FILE[:LINE]: [event N: ]reason` message; nothing else escapes.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildPlan } from '../plan/build';
import { METHODS } from '../plan/types';
import { deriveTree } from '../tree/derive';
import { ValidationError } from './errors';
import { createRng, generateRandomRollout, type Rng } from './generate-random';
import { parseRolloutFile } from './parse';
import { stringifyRollout } from './serialize';

type Json = unknown;
const ODD_VALUES: Json[] = [
  null,
  -1,
  0,
  1,
  2,
  271,
  272,
  1e9,
  1.5,
  -0.0001,
  'x',
  'act',
  'summary',
  'edit',
  [],
  {},
  true,
  [0, 1],
  [1, 0],
  [0, 2, 3],
  { role: 'act', tokens: [1] },
];

/** Every path to a value inside `root` (array elements sampled, so long token lists stay cheap). */
function paths(root: Json, rng: Rng, at: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(at);
  if (Array.isArray(root)) {
    const picks = root.length <= 6 ? root.map((_, i) => i) : [0, root.length - 1, rng.int(0, root.length - 1)];
    for (const i of picks) paths(root[i], rng, [...at, i], out);
  } else if (typeof root === 'object' && root !== null) {
    for (const [k, v] of Object.entries(root)) paths(v, rng, [...at, k], out);
  }
  return out;
}

function parentOf(root: Json, path: (string | number)[]): [Record<string | number, Json>, string | number] | null {
  if (path.length === 0) return null;
  let node = root as Record<string | number, Json>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, Json>;
  return [node, path[path.length - 1]];
}

/** One random structural mutation of a rollout object, in place. */
function mutate(root: Record<string, Json>, rng: Rng): void {
  const all = paths(root, rng);
  const target = all[rng.int(0, all.length - 1)];
  const hit = parentOf(root, target);
  const events: Json[] = Array.isArray(root.events) ? root.events : [];
  switch (rng.int(0, 7)) {
    case 0: // delete a field or element
      if (hit) Array.isArray(hit[0]) ? (hit[0] as Json[]).splice(Number(hit[1]), 1) : delete hit[0][hit[1]];
      break;
    case 1: // replace a value by an odd one
      if (hit) hit[0][hit[1]] = ODD_VALUES[rng.int(0, ODD_VALUES.length - 1)];
      break;
    case 2: // nudge a number
      if (hit && typeof hit[0][hit[1]] === 'number') hit[0][hit[1]] = (hit[0][hit[1]] as number) + rng.int(-3, 3);
      break;
    case 3: // swap two events
      if (events.length > 1) {
        const i = rng.int(0, events.length - 1);
        const j = rng.int(0, events.length - 1);
        [events[i], events[j]] = [events[j], events[i]];
      }
      break;
    case 4: // duplicate or drop an event
      if (events.length) {
        const i = rng.int(0, events.length - 1);
        if (rng.chance(0.5)) events.splice(i, 0, structuredClone(events[i]));
        else events.splice(i, 1);
      }
      break;
    case 5: // an unknown field somewhere
      if (hit && typeof hit[0][hit[1]] === 'object' && hit[0][hit[1]] !== null && !Array.isArray(hit[0][hit[1]])) {
        (hit[0][hit[1]] as Record<string, Json>).surprise = 1;
      } else root.surprise = 1;
      break;
    case 6: // change an op or a role
      if (events.length) {
        const e = events[rng.int(0, events.length - 1)] as Record<string, Json>;
        if (typeof e !== 'object' || e === null) break;
        if (rng.chance(0.5)) e.op = ['append', 'edit', 'remove', 'Append'][rng.int(0, 3)];
        else e.role = ['prompt', 'obs', 'act', 'summary', 'tool'][rng.int(0, 4)];
      }
      break;
    case 7: // move a keep range
      for (const e of events as Record<string, Json>[]) {
        if (typeof e !== 'object' || e === null) continue;
        if (e.op === 'edit' && Array.isArray(e.view) && e.view.length && rng.chance(0.5)) {
          const piece = e.view[rng.int(0, e.view.length - 1)] as Record<string, Json>;
          if (piece && Array.isArray(piece.keep)) piece.keep = [(piece.keep[0] as number) + rng.int(-2, 2), (piece.keep[1] as number) + rng.int(-2, 2)];
          break;
        }
      }
      break;
  }
}

function mangleText(text: string, rng: Rng): string {
  switch (rng.int(0, 2)) {
    case 0:
      return text.slice(0, rng.int(0, text.length)); // truncated
    case 1: {
      const i = rng.int(0, text.length - 1);
      return text.slice(0, i) + '{}[],:"0a\n'[rng.int(0, 9)] + text.slice(i + 1); // one character flipped
    }
    default: {
      const i = rng.int(0, text.length - 1);
      return text.slice(0, i) + text.slice(i + rng.int(1, 20)); // a chunk cut out
    }
  }
}

const MESSAGE = /^f\.jsonl?(:\d+)?: (event \d+: )?[^\n]+$/;

describe('fuzzed rollout files', () => {
  it('either load completely or raise one ValidationError', () => {
    let loaded = 0;
    let rejected = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 3 }), fc.boolean(), (seed, count, mangle) => {
        const rng = createRng(seed ^ 0x5bd1e995);
        const rollouts = Array.from({ length: count }, (_, i) => generateRandomRollout({ seed: seed + i, size: 'small', id: `r${i}` }));
        const jsonl = count > 1;
        const victim = rng.int(0, count - 1);
        for (let m = rng.int(1, 3); m > 0; m--) mutate(rollouts[victim] as unknown as Record<string, Json>, rng);
        let text = jsonl ? rollouts.map((r) => JSON.stringify(r)).join('\n') : JSON.stringify(rollouts[0], null, mangle ? 0 : 1);
        if (mangle && rng.chance(0.5)) text = mangleText(text, rng);
        const file = jsonl ? 'f.jsonl' : 'f.json';
        try {
          const parsed = parseRolloutFile(text, file);
          for (const rollout of parsed) {
            const tree = deriveTree(rollout);
            for (const method of METHODS) buildPlan(tree, method);
          }
          loaded++;
        } catch (error) {
          if (!(error instanceof ValidationError)) throw error;
          if (!MESSAGE.test(error.message)) throw new Error(`malformed message: ${error.message}`);
          if (jsonl && !(error.line === undefined || (error.line >= 1 && error.line <= count))) throw new Error(`line ${error.line}`);
          if (!jsonl && error.line !== undefined) throw new Error('a .json error names a line');
          rejected++;
        }
      }),
      { numRuns: 4000, seed: 99 },
    );
    // Both outcomes happen often: the fuzzer is neither too gentle nor too brutal.
    expect(loaded).toBeGreaterThan(400);
    expect(rejected).toBeGreaterThan(1500);
  });
});

// ------------------------------------------------------------------------------------------------
// Hostile families (issue: nothing crashes): values nested far deeper than any stack, numbers at the
// ends of the float range, byte order marks, a top-level "__proto__". Each file loads completely
// (and then derives, plans and re-serialises) or raises one ValidationError with a one-line message.

/** JSON text of an array or object nested `depth` levels deep (JSON.stringify would overflow). */
function nestedText(depth: number, object: boolean): string {
  return object ? `${'{"k":'.repeat(depth)}0${'}'.repeat(depth)}` : `${'['.repeat(depth)}0${']'.repeat(depth)}`;
}

const HUGE: number[] = [1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 2 ** 53 + 2, 5e-324, -5e-324, -0, 1e-300];

function loadsOrRefuses(text: string, file: string): 'loaded' | 'refused' {
  try {
    const parsed = parseRolloutFile(text, file);
    for (const rollout of parsed) {
      const tree = deriveTree(rollout);
      for (const method of METHODS) buildPlan(tree, method);
      JSON.parse(stringifyRollout(rollout));
    }
    return 'loaded';
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    if (!MESSAGE.test(error.message)) throw new Error(`malformed message: ${error.message.slice(0, 200)}`);
    return 'refused';
  }
}

describe('hostile rollout files', () => {
  it('nesting 50 to 200,000 deep anywhere: loads (kept fields up to 100 levels) or one ValidationError', () => {
    const outcomes = { loaded: 0, refused: 0 };
    for (let seed = 0; seed < 120; seed++) {
      const rng = createRng(seed);
      const root = generateRandomRollout({ seed, size: 'small', id: `n${seed}` }) as unknown as Record<string, Json>;
      const depth = [50, 99, 101, 5000, 200_000][rng.int(0, 4)];
      const all = paths(root, rng).filter((p) => p.length > 0);
      const where = rng.chance(0.3) ? ['meta'] : rng.chance(0.2) ? ['surprise'] : all[rng.int(0, all.length - 1)];
      const hit = parentOf(root, where)!;
      hit[0][hit[1]] = '@deep@';
      outcomes[loadsOrRefuses(JSON.stringify(root).replace('"@deep@"', nestedText(depth, rng.chance(0.5))), 'f.json')]++;
    }
    expect(outcomes.refused).toBeGreaterThan(60);
    expect(outcomes.loaded).toBeGreaterThan(5); // meta and unknown fields under 100 levels are kept
  });

  it('numbers at the ends of the float range anywhere: loads or one ValidationError', () => {
    const outcomes = { loaded: 0, refused: 0 };
    for (let seed = 0; seed < 300; seed++) {
      const rng = createRng(seed ^ 0x9e3779b9);
      const root = generateRandomRollout({ seed, size: 'small', id: `h${seed}` }) as unknown as Record<string, Json>;
      const numbers = paths(root, rng).filter((p) => typeof parentOf(root, p)?.[0][parentOf(root, p)![1]] === 'number');
      if (rng.chance(0.2)) root.reward = HUGE[rng.int(0, 3)];
      else {
        const hit = parentOf(root, numbers[rng.int(0, numbers.length - 1)])!;
        hit[0][hit[1]] = HUGE[rng.int(0, HUGE.length - 1)];
      }
      outcomes[loadsOrRefuses(JSON.stringify(root), rng.chance(0.5) ? 'f.json' : 'f.jsonl')]++;
    }
    expect(outcomes.refused).toBeGreaterThan(100);
    expect(outcomes.loaded).toBeGreaterThan(30);
  });

  it('ignores a leading byte order mark in .json, .jsonl and chat files alike', () => {
    const one = JSON.stringify(generateRandomRollout({ seed: 3, size: 'small', id: 'b' }));
    const two = `${one}\n${one.replace('"id":"b"', '"id":"c"')}\n`;
    const chat = '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}\n';
    for (const [text, file] of [
      [one, 'f.json'],
      [JSON.stringify(JSON.parse(one), null, 2), 'f.json'],
      [two, 'f.jsonl'],
      [two, 'f.json'],
      [chat, 'chat.jsonl'],
    ]) {
      const plain = parseRolloutFile(text, file).map((r) => stringifyRollout(r));
      expect(
        parseRolloutFile(`\ufeff${text}`, file).map((r) => stringifyRollout(r)),
        file,
      ).toEqual(plain);
    }
  });

  it('keeps a top-level "__proto__" field on re-serialisation, like any unknown field', () => {
    for (const value of [{ polluted: true }, 1, 'x', null, [1, 2]]) {
      const root = { __proto__: null, ...generateRandomRollout({ seed: 4, size: 'small', id: 'p' }) } as Record<string, unknown>;
      const text = JSON.stringify(root).replace(/^\{/, `{"__proto__":${JSON.stringify(value)},`);
      const [rollout] = parseRolloutFile(text, 'f.json');
      const back = JSON.parse(stringifyRollout(rollout));
      expect(Object.hasOwn(back, '__proto__')).toBe(true);
      // biome-ignore lint/complexity/useLiteralKeys lint/suspicious/noProto: the key as parsed from JSON (an own property) is what is checked
      expect(back['__proto__']).toEqual(value);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });
});
