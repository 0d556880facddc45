import { describe, expect, it } from 'vitest';
import { byteTokenizer } from '../../rollout/tokenizer';
import { EDITOR_KINDS, createEditor, type EditorKind } from '../editors';
import { runEpisode } from '../episode';
import { actionTokens } from '../framing';
import { createExpertPolicy, expertMove } from '../policies/expert';
import type { Policy } from '../policy';
import { verifyEpisode } from '../verify';
import { COLLECT_DEFAULTS, collectQuestion, createCollectEnv, createCollectWorld, formatFacts, solveCollect } from './collect';

const FACT = /page (\d+): code=([a-z])\./g;

describe('collect world and steps', () => {
  it('asks for `pages` distinct pages of the pool; the gold answer joins their codes in the asked order', () => {
    for (let seed = 0; seed < 50; seed++) {
      const { asked, code } = createCollectWorld(seed, COLLECT_DEFAULTS);
      expect(asked).toHaveLength(3);
      expect(new Set(asked).size).toBe(3);
      for (const p of asked) expect(p >= 1 && p <= 20).toBe(true);
      const episode = createCollectEnv().reset(seed);
      expect(episode.prompt).toBe(collectQuestion(asked));
      expect(episode.gold).toBe(asked.map((p) => code.get(p)).join(''));
      expect(episode.gold).toMatch(/^[a-z]{3}$/);
    }
  });

  it('a read shows the page asked for among `decoys` pages never asked for, then exactly `filler` characters', () => {
    const o = { pages: 4, decoys: 3, filler: 30, pool: 12 };
    const { asked, code } = createCollectWorld(2, o);
    const episode = createCollectEnv(o).reset(2);
    const r = episode.step(`read ${asked[1]} have x`, false);
    if (r.done) throw new Error('read ended the episode');
    const facts = [...r.text.matchAll(FACT)].map(([, p, c]) => [Number(p), c] as const);
    expect(facts).toHaveLength(4);
    for (const [p, c] of facts) expect(code.get(p)).toBe(c);
    expect(facts.filter(([p]) => asked.includes(p))).toEqual([[asked[1], code.get(asked[1])]]);
    const factText = facts.map(([p, c]) => `page ${p}: code=${c}.`).join(' ');
    expect(r.text.length).toBe(factText.length + 1 + 30);
    expect(r.note).toEqual({ page: asked[1], code: code.get(asked[1]) });
  });

  it('scores the answer by exact match; a final non-answer scores 0; junk gets an error observation', () => {
    const env = createCollectEnv();
    const gold = env.reset(4).gold;
    expect(env.reset(4).step(`answer ${gold}`, true)).toEqual({ done: true, answer: gold, gold, em: 1, reward: 1 });
    expect(env.reset(4).step(`answer ${gold.slice(1)}`, true)).toMatchObject({ em: 0, reward: 0 });
    expect(env.reset(4).step('read 3', true)).toEqual({ done: true, answer: null, gold, em: 0, reward: 0 });
    expect(env.reset(4).step('read three', false)).toEqual({ done: false, text: 'error: use read PAGE or answer CODES.' });
    expect(env.reset(4).step('read 99', false)).toEqual({ done: false, text: 'no page 99.' });
    expect(() => createCollectEnv({ pool: 5, pages: 3, decoys: 2 })).toThrow('pool must be an integer in [6, 999]');
  });

  it('summarizes the pages read, each once, in reading order', () => {
    const episode = createCollectEnv().reset(0);
    const notes = [
      { page: 7, code: 'k' },
      { page: 2, code: 'q' },
      { page: 7, code: 'k' },
    ];
    expect(episode.summarize(notes)).toBe('page 7: code=k. page 2: code=q.');
    expect(episode.summarize([])).toBe('nothing read.');
    expect(formatFacts([{ page: 1, code: 'a' }])).toBe('page 1: code=a.');
  });

  it('the solver reads the first page whose code is not in view, noting the codes it has', () => {
    const prompt = { role: 'prompt' as const, text: collectQuestion([7, 2, 5]) };
    expect(solveCollect([prompt])).toEqual({ text: 'read 7', final: false });
    const afterOne = [prompt, { role: 'act' as const, text: 'read 7' }, { role: 'obs' as const, text: 'page 9: code=z. page 7: code=k.' }];
    expect(solveCollect(afterOne)).toEqual({ text: 'read 2 have k', final: false });
    // Its own note is enough when the observations are gone (window).
    const windowed = [prompt, { role: 'act' as const, text: 'read 5 have kq' }, { role: 'obs' as const, text: 'page 5: code=z.' }];
    expect(solveCollect(windowed)).toEqual({ text: 'answer kqz', final: true });
    const summarized = [prompt, { role: 'summary' as const, text: 'page 7: code=k. page 2: code=q. page 5: code=z.' }];
    expect(solveCollect(summarized)).toEqual({ text: 'answer kqz', final: true });
  });
});

describe('the expert on collect', () => {
  it('reaches EM 1 on every one of 200 seeds in pages + 1 actions, and same seed gives the same rollout', async () => {
    const env = createCollectEnv();
    const policy = createExpertPolicy(env);
    for (let seed = 0; seed < 200; seed++) {
      const r = await runEpisode(env, createEditor('none'), policy, seed);
      expect(r.outcome.em, `seed ${seed}`).toBe(1);
      expect(r.rollout.reward).toBe(1);
      expect(r.decodes).toHaveLength(4);
    }
    const a = await runEpisode(env, createEditor('stack'), policy, 77);
    const b = await runEpisode(createCollectEnv(), createEditor('stack'), createExpertPolicy(createCollectEnv()), 77);
    expect(JSON.stringify(a.rollout)).toBe(JSON.stringify(b.rollout));
  });

  it('reaches EM 1 under every editor with default budgets and across difficulty settings', async () => {
    for (const difficulty of [{}, { pages: 1 }, { pages: 5, decoys: 4, filler: 80 }, { pages: 2, decoys: 0, filler: 0, pool: 3 }]) {
      const env = createCollectEnv(difficulty);
      for (const kind of EDITOR_KINDS) {
        for (let seed = 0; seed < 20; seed++) {
          const r = await runEpisode(env, createEditor(kind), createExpertPolicy(env), seed);
          expect(r.outcome.em, `${JSON.stringify(difficulty)} ${kind} ${seed}`).toBe(1);
          verifyEpisode(r);
        }
      }
    }
  });

  it('needs memory: without its notes the expert fails under a window and still succeeds where summaries survive', async () => {
    const env = createCollectEnv();
    // The expert with ` have ...` stripped from its reads: its progress then lives only in observations.
    const forgetful: Policy = {
      name: 'forgetful',
      start: (info) => ({
        act: async ({ view, maxTokens }) => {
          const move = expertMove(env, info, view, maxTokens);
          const tokens = actionTokens(move.text.replace(/ have \S+$/, ''), move.final);
          return { tokens, logprobs: tokens.map(() => 0) };
        },
      }),
    };
    const em: Partial<Record<EditorKind, number>> = {};
    for (const kind of EDITOR_KINDS) {
      let sum = 0;
      for (let seed = 0; seed < 30; seed++) sum += (await runEpisode(env, createEditor(kind), forgetful, seed)).outcome.em;
      em[kind] = sum / 30;
    }
    expect(em).toEqual({ none: 1, window: 0, compact: 1, stack: 1, fold: 1 });
    const r = await runEpisode(env, createEditor('window'), forgetful, 0);
    // It sees one page at a time, so it never gets past the second: read 1st, 2nd, 1st, 2nd, ...
    const asked = createCollectWorld(0, COLLECT_DEFAULTS).asked;
    expect(r.stop).toBe('turns');
    expect(r.decodes.map((d) => byteTokenizer.decode(d.actTokens))).toEqual(Array.from({ length: env.maxTurns }, (_, i) => `read ${asked[i % 2]}\n`));
  });
});
