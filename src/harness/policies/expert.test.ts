import { describe, expect, it } from 'vitest';
import { byteTokenizer } from '../../rollout/tokenizer';
import { createEditor, editorSpec } from '../editors';
import { createLookupEnv } from '../env/lookup';
import { runEpisode } from '../episode';
import { actionTokens, readView } from '../framing';
import { verifyEpisode } from '../verify';
import { createExpertPolicy, expertMove, prefixLogprobs } from './expert';

describe('prefixLogprobs', () => {
  const seq = (s: string) => byteTokenizer.encode(s);
  const candidates = [
    { tokens: seq('ab\n'), p: 0.5 },
    { tokens: seq('ac\n'), p: 0.3 },
    { tokens: seq('b\n'), p: 0.2 },
  ];

  it('gives log P(prefix + token) / P(prefix) per token, summing to log P(action)', () => {
    const lp = prefixLogprobs(seq('ac\n'), candidates);
    expect(lp[0]).toBeCloseTo(Math.log(0.8), 14);
    expect(lp[1]).toBeCloseTo(Math.log(0.3 / 0.8), 14);
    expect(lp[2]).toBe(0);
    expect(lp.reduce((a, b) => a + b, 0)).toBeCloseTo(Math.log(0.3), 14);
    expect(prefixLogprobs(seq('b\n'), candidates)).toEqual([Math.log(0.2), 0]);
  });

  it('is exactly 0 where only one continuation is possible, and refuses an impossible action', () => {
    expect(prefixLogprobs(seq('ab\n'), [{ tokens: seq('ab\n'), p: 1 }])).toEqual([0, 0, 0]);
    expect(() => prefixLogprobs(seq('x\n'), candidates)).toThrow('probability 0');
  });
});

describe('the expert policy', () => {
  it('folds under the fold editor exactly when the view is over budget and holds more turns than it keeps', async () => {
    const env = createLookupEnv();
    for (const [budget, keepTurns] of [
      [200, 1],
      [150, 0],
      [300, 2],
      [1000, 1],
    ] as const) {
      const spec = editorSpec('fold', { budget, keepTurns });
      const r = await runEpisode(env, createEditor(spec), createExpertPolicy(env), 2);
      verifyEpisode(r);
      for (const d of r.decodes) {
        const turns = readView(d.viewTokens).filter((b) => b.role === 'act').length;
        const folds = byteTokenizer.decode(d.actTokens).startsWith('fold ');
        expect(folds).toBe(d.viewTokens.length > budget && turns > keepTurns);
      }
      expect(r.outcome.em).toBe(1);
      if (budget === 1000) expect(r.K).toBe(0);
      else expect(r.K).toBeGreaterThan(0);
    }
  });

  it('writes its fold summary from the state it reads: every link found so far and the step', async () => {
    const env = createLookupEnv();
    const r = await runEpisode(env, createEditor('fold'), createExpertPolicy(env), 0);
    const folds = r.decodes.map((d) => byteTokenizer.decode(d.actTokens)).filter((t) => t.startsWith('fold '));
    const chain = [/of (\S+)\?$/.exec(env.reset(0).prompt)![1]];
    for (const d of r.decodes) {
      const m = /^lookup (\S+)\n$/.exec(byteTokenizer.decode(d.actTokens));
      if (m && m[1] !== chain.at(-1)) chain.push(m[1]);
    }
    chain.push(r.outcome.gold);
    expect(chain).toHaveLength(4);
    expect(folds).toEqual([
      `fold found ${chain[0]}->${chain[1]}, ${chain[1]}->${chain[2]}. step 2/3.\n`,
      `fold found ${chain[0]}->${chain[1]}, ${chain[1]}->${chain[2]}, ${chain[2]}->${chain[3]}. step 3/3.\n`,
    ]);
  });

  it('acts on the view alone: the same view gives the same move whatever the episode', () => {
    const env = createLookupEnv();
    const info = { env: 'lookup', editor: editorSpec('none'), seed: 0 };
    const view = [...byteTokenizer.encode('x'), ...actionTokens('lookup ann', false)];
    expect(() => expertMove(env, info, view)).toThrow('no question in the live view');
    const episode = env.reset(8);
    const prompt = [256, 258, ...byteTokenizer.encode(episode.prompt), 260];
    expect(expertMove(env, info, prompt)).toEqual({ text: `lookup ${/of (\S+)\?$/.exec(episode.prompt)![1]}`, final: false });
  });

  it('with noise ε slips on about ε of its actions and reports the mixture logprobs exactly', async () => {
    const env = createLookupEnv();
    const noise = 0.2;
    const policy = createExpertPolicy(env, { noise });
    expect(policy.name).toBe('expert(noise=0.2)');
    let acts = 0;
    let slips = 0;
    let rewards = 0;
    const moves = env.moves([]).length; // 80: lookup and answer for each of 40 names
    expect(moves).toBe(80);
    for (let seed = 0; seed < 150; seed++) {
      const r = await runEpisode(env, createEditor('none'), policy, seed);
      verifyEpisode(r);
      rewards += r.outcome.reward;
      for (const d of r.decodes) {
        const best = expertMove(env, { env: 'lookup', editor: editorSpec('none'), seed: 0 }, d.viewTokens);
        const bestTokens = actionTokens(best.text, best.final);
        const same = bestTokens.length === d.actTokens.length && bestTokens.every((t, i) => t === d.actTokens[i]);
        // The action's total logprob is log P(action) under the mixture (best is among the slips too).
        const act = r.rollout.events.filter((e) => e.op === 'append' && e.role === 'act')[d.step] as { logprobs: number[] };
        const sum = act.logprobs.reduce((a, b) => a + b, 0);
        const p = (same ? 1 - noise : 0) + noise / moves;
        expect(sum).toBeCloseTo(Math.log(p), 10);
        acts++;
        if (!same) slips++;
      }
    }
    // A slip picks the expert's own move 1 time in 80, so visible slips are about ε·79/80 of actions.
    expect(slips / acts).toBeGreaterThan(0.15);
    expect(slips / acts).toBeLessThan(0.25);
    // Four actions per episode, each right with probability 0.8 + 0.2/80: EM about 0.42.
    expect(rewards / 150).toBeGreaterThan(0.3);
    expect(rewards / 150).toBeLessThan(0.55);
  });
});
