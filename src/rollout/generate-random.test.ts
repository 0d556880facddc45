// The random-rollout generator other tests build on: valid, reproducible, sized as asked.

import { describe, expect, it } from 'vitest';
import { deriveTree } from '../tree/derive';
import { generateRandomRollout } from './generate-random';
import { validateRollout } from './validate';

const load = (json: ReturnType<typeof generateRandomRollout>) => validateRollout(json, { file: 'random' });

describe('generateRandomRollout', () => {
  it('is reproducible from its seed', () => {
    expect(generateRandomRollout({ seed: 7 })).toEqual(generateRandomRollout({ seed: 7 }));
    expect(generateRandomRollout({ seed: 7 })).not.toEqual(generateRandomRollout({ seed: 8 }));
  });

  it("keeps size 'small' small (for GPU tests)", () => {
    let maxL = 0;
    let maxK = 0;
    let withTargets = 0;
    for (let seed = 0; seed < 500; seed++) {
      const r = load(generateRandomRollout({ seed, size: 'small' }));
      maxL = Math.max(maxL, r.length);
      maxK = Math.max(maxK, r.K);
      if (r.targets.length) withTargets++;
    }
    expect(maxL).toBeLessThanOrEqual(64);
    expect(maxL).toBeGreaterThan(40);
    expect(maxK).toBe(3);
    expect(withTargets).toBeGreaterThan(450);
  });

  it('honours a hard maxTokens', () => {
    for (let seed = 0; seed < 100; seed++) expect(load(generateRandomRollout({ seed, size: 'medium', maxTokens: 30 })).length).toBeLessThanOrEqual(30);
  });

  it('makes exactly the edits asked for, about the tokens asked for, and respects the vocabulary', () => {
    const r = load(generateRandomRollout({ seed: 3, tokens: 5000, edits: 25, vocab: 64 }));
    expect(r.K).toBe(25);
    expect(r.length).toBeGreaterThan(3000);
    expect(r.length).toBeLessThan(8000);
    expect(Math.max(...r.tokens)).toBeLessThan(64);
  });

  it('shrinks the live view whenever it grew past maxLive', () => {
    const maxLive = 300;
    const r = load(generateRandomRollout({ seed: 11, tokens: 20000, edits: 60, maxLive, size: 'large' }));
    const tree = deriveTree(r);
    let shrinks = 0;
    for (let k = 1; k <= r.K; k++) {
      const before = tree.branches[k - 1].length;
      const appended = r.events.filter((e) => e.op === 'append' && r.segments[e.first] === k).reduce((n, e) => n + (e.op === 'append' ? e.count : 0), 0);
      const after = tree.branches[k].length - appended;
      if (before > maxLive) {
        shrinks++;
        expect(after).toBeLessThanOrEqual(maxLive);
      }
    }
    expect(shrinks).toBeGreaterThan(20);
    expect(Math.max(...tree.branches.map((b) => b.length))).toBeLessThan(3 * maxLive);
  });
});
