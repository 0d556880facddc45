import { describe, expect, it } from 'vitest';
import { createEditor, createEnv, createExpertPolicy, createRandomPolicy, EDITOR_KINDS, editorSpec, runEpisode, type Policy } from '../../../harness';
import type { EventJson, RolloutJson } from '../../../rollout/format';
import { ROLLOUT_FORMAT } from '../../../rollout/format';
import { validateRollout } from '../../../rollout/validate';
import { observeEpisode } from './liveEpisode';

/** A policy that reports each token before returning the action, as a decoding model does. */
function streaming(inner: Policy, report: (token: number, logprob: number) => void): Policy {
  return {
    name: inner.name,
    async start(info) {
      const session = await inner.start(info);
      return {
        async act(request) {
          const action = await session.act(request);
          action.tokens.forEach((t, i) => report(t, action.logprobs[i]));
          return action;
        },
      };
    },
  };
}

const partial = (events: readonly EventJson[]): RolloutJson => ({ format: ROLLOUT_FORMAT, id: 'live', vocab: 272, tokenizer: 'byte', events: structuredClone([...events]) });

describe('observeEpisode', () => {
  for (const kind of EDITOR_KINDS) {
    for (const envId of ['lookup', 'collect'] as const) {
      it(`${envId} / ${kind}: the live events are the rollout's events as they happen, and every snapshot validates`, async () => {
        const env = createEnv(envId === 'lookup' ? { id: 'lookup', hops: 3, distractors: 1, filler: 20 } : { id: 'collect', pages: 3, decoys: 1, filler: 20 });
        const editor = createEditor(kind === 'none' ? editorSpec('none') : editorSpec(kind, { budget: 90 }));
        let snapshots = 0;
        let edits = 0;
        let tokens = 0;
        const live = observeEpisode(editor, streaming(createExpertPolicy(env, { noise: envId === 'collect' ? 0.3 : 0 }), (t, lp) => live.token(t, lp)), (events, change) => {
          snapshots++;
          if (change === 'edit') edits++;
          if (change === 'token') tokens++;
          validateRollout(partial(events), { file: `${kind}.json` });
        });
        const result = await runEpisode(env, live.editor, live.policy, 7);
        const real = result.rollout.events;
        // Everything but an observation appended after the last action (the episode ended) is seen live.
        expect(live.events.length).toBeGreaterThanOrEqual(real.length - 1);
        expect(structuredClone(live.events)).toEqual(real.slice(0, live.events.length));
        expect(edits).toBe(result.K);
        expect(tokens).toBe(result.decodes.reduce((n, d) => n + d.actTokens.length, 0));
        expect(snapshots).toBeGreaterThan(0);
        if (kind !== 'none' && kind !== 'fold') expect(result.K).toBeGreaterThan(0);
      });
    }
  }

  it('a random policy with many edits: live events equal the final ones', async () => {
    const env = createEnv({ id: 'lookup', hops: 4, distractors: 0, filler: 0 });
    const live = observeEpisode(createEditor(editorSpec('window', { budget: 40 })), createRandomPolicy({ stopRate: 0.3 }), () => undefined);
    const result = await runEpisode(env, live.editor, live.policy, 3, { maxTurns: 12 });
    expect(structuredClone(live.events)).toEqual(result.rollout.events.slice(0, live.events.length));
    expect(live.events.length).toBeGreaterThanOrEqual(result.rollout.events.length - 1);
  });
});
