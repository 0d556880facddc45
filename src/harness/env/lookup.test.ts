import { describe, expect, it } from 'vitest';
import { byteTokenizer } from '../../rollout/tokenizer';
import { createEditor, EDITOR_KINDS } from '../editors';
import { runEpisode } from '../episode';
import { readView } from '../framing';
import { createExpertPolicy } from '../policies/expert';
import { verifyEpisode } from '../verify';
import { createEnv } from './index';
import {
  LOOKUP_DEFAULTS,
  LOOKUP_NAMES,
  createLookupEnv,
  createLookupWorld,
  formatLookupSummary,
  lookupQuestion,
  parseLookupSummary,
  readLookupState,
  solveLookup,
  type LookupNote,
} from './lookup';

const FACT = /(\S+): boss=(\S+?)\./g;

describe('lookup world', () => {
  it('chains the boss relation `hops` times from the start to the gold answer, over distinct names', () => {
    for (let seed = 0; seed < 50; seed++) {
      const { world } = createLookupWorld(seed, { ...LOOKUP_DEFAULTS, hops: 4 });
      expect(world.chain).toHaveLength(5);
      expect(new Set(world.chain).size).toBe(5);
      let who = world.chain[0];
      for (let i = 0; i < 4; i++) who = world.boss.get(who)!;
      expect(who).toBe(world.chain[4]);
      expect(world.boss.size).toBe(40);
      for (const [name, boss] of world.boss) expect(boss).not.toBe(name);
    }
  });

  it('asks the question with one "the boss of" per hop', () => {
    expect(lookupQuestion('ann', 1)).toBe('Q: who is the boss of ann?');
    expect(lookupQuestion('ann', 3)).toBe('Q: who is the boss of the boss of the boss of ann?');
    const episode = createLookupEnv({ hops: 2 }).reset(5);
    const { world } = createLookupWorld(5, { ...LOOKUP_DEFAULTS, hops: 2 });
    expect(episode.prompt).toBe(lookupQuestion(world.chain[0], 2));
    expect(episode.gold).toBe(world.chain[2]);
  });
});

describe('lookup steps and rewards', () => {
  const options = { hops: 2, distractors: 3, filler: 25, names: 12 };
  const { world } = createLookupWorld(11, { ...LOOKUP_DEFAULTS, ...options });
  const [start, middle, gold] = world.chain;

  it('a lookup returns the fact asked for among `distractors` true facts, the step counter and exactly `filler` characters', () => {
    const episode = createLookupEnv(options).reset(11);
    const first = episode.step(`lookup ${start}`, false);
    if (first.done) throw new Error('lookup ended the episode');
    expect(first.text.startsWith('step 1/2. ')).toBe(true);
    const facts = [...first.text.matchAll(FACT)].map(([, a, b]) => [a, b]);
    expect(facts).toHaveLength(4);
    expect(new Set(facts.map(([a]) => a)).size).toBe(4);
    for (const [a, b] of facts) expect(world.boss.get(a)).toBe(b);
    expect(facts.filter(([a]) => a === start)).toEqual([[start, middle]]);
    const factText = facts.map(([a, b]) => `${a}: boss=${b}.`);
    const head = `step 1/2. ${factText.join(' ')} `;
    expect(first.text.startsWith(head)).toBe(true);
    expect(first.text.length - head.length).toBe(25);
    expect(first.text.slice(head.length)).toMatch(/^[a-z ]{25}$/);
    expect(first.note).toEqual({ from: start, to: middle, step: 1, hops: 2 } satisfies LookupNote);

    const second = episode.step(`lookup ${middle}`, false);
    expect(second.done === false && second.text.startsWith('step 2/2. ')).toBe(true);
  });

  it('scores the answer by exact match (case-insensitive): reward 1 for the gold name, 0 otherwise', () => {
    const env = createLookupEnv(options);
    expect(env.reset(11).step(`answer ${gold}`, true)).toEqual({ done: true, answer: gold, gold, em: 1, reward: 1 });
    expect(env.reset(11).step(`answer ${gold.toUpperCase()}`, false)).toMatchObject({ done: true, em: 1, reward: 1 });
    expect(env.reset(11).step(`answer ${middle}`, true)).toEqual({ done: true, answer: middle, gold, em: 0, reward: 0 });
    expect(env.reset(11).step(`answer ${gold}x`, true)).toMatchObject({ em: 0, reward: 0 });
    // A final action that is no answer ends the episode unscored.
    expect(env.reset(11).step(`lookup ${start}`, true)).toEqual({ done: true, answer: null, gold, em: 0, reward: 0 });
  });

  it('answers malformed actions and unknown names with an observation, not an end', () => {
    const episode = createLookupEnv(options).reset(11);
    expect(episode.step('look up ann', false)).toEqual({ done: false, text: 'error: use lookup NAME or answer NAME.' });
    expect(episode.step('lookup zzz', false)).toEqual({ done: false, text: 'step 1/2. no entry for zzz.' });
  });

  it('is deterministic per seed: same seed, same prompt and observations; other seeds differ', () => {
    const play = (seed: number) => {
      const e = createLookupEnv().reset(seed);
      const start = /of (\S+)\?$/.exec(e.prompt)![1];
      return [e.prompt, e.step(`lookup ${start}`, false), e.step('lookup ann', false)];
    };
    expect(play(3)).toEqual(play(3));
    expect(play(3)).not.toEqual(play(4));
  });

  it('rejects difficulty knobs out of range', () => {
    expect(() => createLookupEnv({ hops: 0 })).toThrow('hops must be an integer in [1, 16]');
    expect(() => createLookupEnv({ names: 3, hops: 3 })).toThrow('names must be an integer in [4, 40]');
    expect(() => createLookupEnv({ filler: 1.5 })).toThrow('filler');
    expect(() => createEnv({ id: 'nope' } as never)).toThrow('unknown environment "nope"');
  });
});

describe('lookup summaries and the view-reading solver', () => {
  it('formats and parses summaries; "found nothing." carries no state', () => {
    const state = {
      links: [
        { from: 'ann', to: 'bob' },
        { from: 'bob', to: 'cal' },
      ],
      step: 2,
      hops: 3,
    };
    expect(formatLookupSummary(state)).toBe('found ann->bob, bob->cal. step 2/3.');
    expect(parseLookupSummary('found ann->bob, bob->cal. step 2/3.')).toEqual(state);
    expect(formatLookupSummary({ links: [], step: 0, hops: 3 })).toBe('found nothing.');
    expect(parseLookupSummary('found nothing.')).toBeNull();
    expect(parseLookupSummary('lookup ann')).toBeNull();
  });

  it('the editor summary of notes lists each link once, latest last, with the latest step', () => {
    const episode = createLookupEnv().reset(0);
    const notes: LookupNote[] = [
      { from: 'ann', to: 'bob', step: 1, hops: 3 },
      { from: 'bob', to: 'cal', step: 2, hops: 3 },
      { from: 'ann', to: 'bob', step: 3, hops: 3 },
    ];
    expect(episode.summarize(notes)).toBe('found bob->cal, ann->bob. step 3/3.');
    expect(episode.summarize([])).toBe('found nothing.');
  });

  it('reads progress from the latest observation, after the action that asked for it', () => {
    const view = readView([]);
    expect(view).toEqual([]);
    const blocks = [
      { role: 'prompt' as const, text: 'Q: who is the boss of the boss of ann?' },
      { role: 'act' as const, text: 'lookup ann' },
      { role: 'obs' as const, text: 'step 1/2. kim: boss=ann. ann: boss=bob. filler' },
    ];
    expect(readLookupState(blocks)).toEqual({ links: [{ from: 'ann', to: 'bob' }], step: 1, hops: 2 });
    expect(solveLookup(blocks)).toEqual({ text: 'lookup bob', final: false });
    const done = [...blocks, { role: 'act' as const, text: 'lookup bob' }, { role: 'obs' as const, text: 'step 2/2. bob: boss=cal.' }];
    expect(solveLookup(done)).toEqual({ text: 'answer cal', final: true });
    // A summary in place of the observations (compact, fold) says the same.
    const compacted = [blocks[0], { role: 'summary' as const, text: 'found ann->bob, bob->cal. step 2/2.' }];
    expect(solveLookup(compacted)).toEqual({ text: 'answer cal', final: true });
    expect(solveLookup([blocks[0]])).toEqual({ text: 'lookup ann', final: false });
  });
});

describe('the expert on lookup', () => {
  it('reaches EM 1 (reward 1) on every one of 200 seeds, in exactly hops + 1 actions', async () => {
    const env = createLookupEnv();
    const policy = createExpertPolicy(env);
    for (let seed = 0; seed < 200; seed++) {
      const r = await runEpisode(env, createEditor('none'), policy, seed);
      expect(r.outcome.em, `seed ${seed}`).toBe(1);
      expect(r.rollout.reward).toBe(1);
      expect(r.stop).toBe('done');
      expect(r.decodes).toHaveLength(LOOKUP_DEFAULTS.hops + 1);
      expect(r.outcome.answer).toBe(createLookupWorld(seed, LOOKUP_DEFAULTS).world.chain[3]);
    }
  });

  it('reaches EM 1 on every seed under every editor with default budgets, and across difficulty settings', async () => {
    for (const difficulty of [{}, { hops: 1 }, { hops: 5, distractors: 4, filler: 80 }, { hops: 2, distractors: 0, filler: 0, names: 3 }]) {
      const env = createLookupEnv(difficulty);
      const policy = createExpertPolicy(env);
      for (const kind of EDITOR_KINDS) {
        for (let seed = 0; seed < 25; seed++) {
          const r = await runEpisode(env, createEditor(kind), policy, seed);
          expect(r.outcome.em, `${JSON.stringify(difficulty)} ${kind} seed ${seed}`).toBe(1);
          verifyEpisode(r);
        }
      }
    }
  });

  it('same seed, same rollout (byte for byte); another seed, another rollout', async () => {
    const env = createLookupEnv();
    const policy = createExpertPolicy(env);
    for (const kind of EDITOR_KINDS) {
      const a = await runEpisode(env, createEditor(kind), policy, 42);
      const b = await runEpisode(createLookupEnv(), createEditor(kind), createExpertPolicy(createLookupEnv()), 42);
      expect(JSON.stringify(a.rollout)).toBe(JSON.stringify(b.rollout));
      const c = await runEpisode(env, createEditor(kind), policy, 43);
      expect(JSON.stringify(c.rollout)).not.toBe(JSON.stringify(a.rollout));
    }
  });

  it('uses names from the seeded pool only', async () => {
    const env = createLookupEnv({ names: 8 });
    const r = await runEpisode(env, createEditor('none'), createExpertPolicy(env), 9);
    const text = byteTokenizer.decode(r.decodes.at(-1)!.viewTokens);
    const names = [...text.matchAll(FACT)].flatMap(([, a, b]) => [a, b]);
    expect(names).toHaveLength(2 * 3 * (LOOKUP_DEFAULTS.distractors + 1));
    for (const n of names) expect(LOOKUP_NAMES.slice(0, 8)).toContain(n);
  });
});
