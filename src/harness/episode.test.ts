import { describe, expect, it } from 'vitest';
import { BOS, EOS, ROLE_MARKER, byteTokenizer } from '../rollout/tokenizer';
import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree';
import { EDITOR_KINDS, createEditor, editorSpec } from './editors';
import { createLookupEnv } from './env/lookup';
import { runEpisode } from './episode';
import { createExpertPolicy } from './policies/expert';
import { createRandomPolicy } from './policies/random';
import type { Action, DecodeRequest, Policy } from './policy';
import { verifyEpisode } from './verify';

/**
 * Wraps a policy and keeps what a KV cache would hold: the tokens it has seen. Each act's view
 * must extend the cache (the previous view, the previous action, then appended tokens) unless an
 * onEdit came in between, whose view must agree with the cache below firstChanged and differ at it.
 */
function cacheChecking(inner: Policy, log: { acts: number; edits: number; reused: number; firstChanged: number[] }): Policy {
  return {
    name: `cache(${inner.name})`,
    async start(info) {
      const session = await inner.start(info);
      let cache: number[] = [];
      return {
        async act(request: DecodeRequest): Promise<Action> {
          const view = request.view;
          for (let i = 0; i < cache.length; i++) {
            if (view[i] !== cache[i]) throw new Error(`act ${log.acts}: view differs from the cache at ${i}`);
          }
          log.reused += cache.length;
          log.acts++;
          const action = await session.act(request);
          cache = [...view, ...action.tokens];
          return action;
        },
        async onEdit(view, firstChanged) {
          // The view before the edit is the cache plus the observation appended since: at most
          // firstChanged positions can be shared with the cache.
          for (let i = 0; i < Math.min(firstChanged, cache.length); i++) {
            if (view[i] !== cache[i]) throw new Error(`edit: view differs below firstChanged at ${i}`);
          }
          log.edits++;
          log.firstChanged.push(firstChanged);
          cache = cache.slice(0, firstChanged);
          await session.onEdit?.(view, firstChanged);
        },
      };
    },
  };
}

describe('runEpisode', () => {
  it('writes the expert rollout as docs/rollout-format.md events: prompt, then act/obs turns, BOS, markers and cues', async () => {
    const env = createLookupEnv({ hops: 1, distractors: 0, filler: 0 });
    const r = await runEpisode(env, createEditor('none'), createExpertPolicy(env), 0);
    const start = /of (\S+)\?$/.exec(env.reset(0).prompt)![1];
    const events = r.rollout.events.map((e) => (e.op === 'append' ? [e.role, byteTokenizer.decode(e.tokens!)] : ['edit']));
    const gold = r.outcome.gold;
    expect(events).toEqual([
      ['prompt', `<bos><prompt>Q: who is the boss of ${start}?<act>`],
      ['act', `lookup ${start}\n`],
      ['obs', `<obs>step 1/1. ${start}: boss=${gold}.<act>`],
      ['act', `answer ${gold}<eos>`],
    ]);
    expect(r.rollout).toMatchObject({
      format: 'memorywalker.rollout/v1',
      id: 'lookup-none-0',
      vocab: 272,
      tokenizer: 'byte',
      reward: 1,
      meta: { env: 'lookup', editor: 'none', budget: null, seed: 0, em: 1, policy: 'expert', stop: 'done', turns: 2, K: 0 },
    });
    // Expert logprobs are log 1 = 0 on every action token.
    const acts = r.rollout.events.filter((e) => e.op === 'append' && e.role === 'act');
    for (const a of acts) expect(a.op === 'append' && a.logprobs!.every((lp) => lp === 0)).toBe(true);
    const prompt = r.rollout.events[0];
    expect(prompt.op === 'append' && [prompt.tokens![0], prompt.tokens![1], prompt.tokens!.at(-1)]).toEqual([BOS, ROLE_MARKER.prompt, ROLE_MARKER.act]);
  });

  it('gives a KV-cache policy views that extend its cache, and edits with the exact first changed position', async () => {
    for (const kind of EDITOR_KINDS) {
      const env = createLookupEnv();
      const log = { acts: 0, edits: 0, reused: 0, firstChanged: [] as number[] };
      const r = await runEpisode(env, createEditor(kind), cacheChecking(createExpertPolicy(env), log), 3);
      expect(log.acts).toBe(r.decodes.length);
      expect(log.edits).toBe(r.K);
      verifyEpisode(r);
      // firstChanged is the first position where the view's ids changed: the tree's evicted/inserted
      // ids start there. For window/stack/compact/fold on this task, everything before the first
      // change is the prompt (compact/fold also drop its cue) or the prompt and kept actions.
      const tree = deriveTree(validateRollout(r.rollout, { file: 'x' }));
      log.firstChanged.forEach((fc, k) => {
        const before = Array.from(tree.branchIds(k));
        const after = Array.from(tree.branchIds(k + 1));
        expect(before.slice(0, fc)).toEqual(after.slice(0, fc));
        expect(before[fc]).not.toBe(after[fc]);
      });
      if (kind === 'window') expect(log.firstChanged).toEqual([53, 53]);
      if (kind === 'compact' || kind === 'fold') expect(log.firstChanged).toEqual([52, 52]);
      // stack: prompt + first action (64); then also the first summary (27) and second action (11).
      if (kind === 'stack') expect(log.firstChanged).toEqual([64, 102]);
    }
  });

  it('records the random policy verbatim: its tokens and logprobs, junk actions answered, episodes cut off', async () => {
    const env = createLookupEnv();
    const stops = new Map<string, number>();
    for (let seed = 0; seed < 60; seed++) {
      const kind = EDITOR_KINDS[seed % EDITOR_KINDS.length];
      const r = await runEpisode(env, createEditor(editorSpec(kind === 'none' ? 'none' : kind)), createRandomPolicy({ stopRate: 0.08 }), seed, {
        maxTurns: 12,
        maxActTokens: 20,
      });
      verifyEpisode(r);
      stops.set(r.stop, (stops.get(r.stop) ?? 0) + 1);
      const lp = Math.log(0.92 / 30);
      for (const e of r.rollout.events) {
        if (e.op !== 'append' || e.role !== 'act') continue;
        e.tokens!.forEach((t, i) => {
          const expected = t === 10 || t === EOS ? Math.log(0.04) : lp;
          expect(e.logprobs![i]).toBeCloseTo(expected, 12);
        });
      }
      expect(r.outcome.reward).toBe(0);
    }
    // Random text ends with EOS (done, unscored), runs past 20 tokens (truncated), or babbles 12 turns.
    expect(stops.get('done')).toBeGreaterThan(10);
    expect(stops.get('truncated')).toBeGreaterThan(0);
    expect((stops.get('done') ?? 0) + (stops.get('truncated') ?? 0) + (stops.get('turns') ?? 0)).toBe(60);
  });

  it('same seeds, same rollout for a sampling policy; another policy seed, another rollout', async () => {
    const env = createLookupEnv();
    const policy = createExpertPolicy(env, { noise: 0.5 });
    const a = await runEpisode(env, createEditor('compact'), policy, 5, { policySeed: 1 });
    const b = await runEpisode(env, createEditor('compact'), policy, 5, { policySeed: 1 });
    expect(JSON.stringify(b.rollout)).toBe(JSON.stringify(a.rollout));
    const texts = new Set<string>();
    for (let s = 0; s < 8; s++) texts.add(JSON.stringify((await runEpisode(env, createEditor('compact'), policy, 5, { policySeed: s })).rollout.events));
    expect(texts.size).toBeGreaterThan(4);
  });

  it('stops when the context is full, and cuts an action to the context that is left', async () => {
    const env = createLookupEnv();
    // 53 prompt + 108 per turn: after two turns 269 tokens; a context of 275 leaves 6 for the third action.
    const r = await runEpisode(env, createEditor('none'), createExpertPolicy(env), 0, { maxContext: 275 });
    expect(r.decodes.map((d) => d.viewIds.length)).toEqual([53, 161, 269]);
    expect(byteTokenizer.decode(r.decodes[2].actTokens)).toBe('lookup');
    expect(r.stop).toBe('truncated');
    expect(r.outcome).toMatchObject({ em: 0, reward: 0, answer: null });
    const full = await runEpisode(env, createEditor('none'), createExpertPolicy(env), 0, { maxContext: 269 });
    expect(full.stop).toBe('context');
    expect(full.decodes).toHaveLength(2);
    // With a window the same context suffices.
    const windowed = await runEpisode(env, createEditor('window'), createExpertPolicy(env), 0, { maxContext: 275 });
    expect(windowed.outcome.em).toBe(1);
  });

  it('refuses a policy that breaks the contract, naming it', async () => {
    const env = createLookupEnv();
    const fixed = (action: Action): Policy => ({ name: 'bad', start: () => ({ act: async () => action }) });
    const run = (action: Action) => runEpisode(env, createEditor('none'), fixed(action), 0);
    await expect(run({ tokens: [], logprobs: [] })).rejects.toThrow('policy bad: an action needs at least one token');
    await expect(run({ tokens: [97, 10, 98, 10], logprobs: [0, 0, 0, 0] })).rejects.toThrow('stop token 10 before the end');
    await expect(run({ tokens: [97, 10], logprobs: [0] })).rejects.toThrow('1 logprobs for 2 tokens');
    await expect(run({ tokens: [97, 10], logprobs: [0, 0.5] })).rejects.toThrow('logprob 0.5 is not a finite number <= 0');
    await expect(run({ tokens: [272, 10], logprobs: [0, 0] })).rejects.toThrow('token 272 is not in [0, 272)');
    await expect(run({ tokens: new Array(81).fill(97), logprobs: new Array(81).fill(0) })).rejects.toThrow('81 tokens, the budget was 80');
    let closed = 0;
    const closing: Policy = { name: 'bad', start: () => ({ act: async () => ({ tokens: [], logprobs: [] }), close: () => void closed++ }) };
    await expect(runEpisode(env, createEditor('none'), closing, 0)).rejects.toThrow();
    expect(closed).toBe(1);
  });
});

describe('endAtLastAction', () => {
  it('drops the events after the last action and says how many', async () => {
    const { endAtLastAction } = await import('./episode');
    const rollout = {
      format: 'memorywalker.rollout/v1' as const,
      id: 'cut',
      vocab: 272,
      events: [
        { op: 'append' as const, role: 'prompt' as const, tokens: [1, 2] },
        { op: 'append' as const, role: 'act' as const, tokens: [3], logprobs: [-1] },
        { op: 'append' as const, role: 'obs' as const, tokens: [4, 5] },
        { op: 'edit' as const, view: [{ keep: [0, 2] as [number, number] }] },
      ],
    };
    const cut = endAtLastAction(rollout);
    expect(cut.events).toHaveLength(2);
    expect(cut.meta).toEqual({ trimmedEvents: 2 });
    expect(endAtLastAction(cut)).toBe(cut);
  });
});
