// runEpisode's event hook: a watcher sees every docs/rollout-format.md event the moment the harness
// records it, so the events it saw are the rollout's, in order, and every snapshot validates.
import { describe, expect, it } from 'vitest';
import { createEditor, createEnv, createExpertPolicy, createRandomPolicy, EDITOR_KINDS, editorSpec, runEpisode } from '.';
import type { EventJson, RolloutJson } from '../rollout/format';
import { ROLLOUT_FORMAT } from '../rollout/format';
import { validateRollout } from '../rollout/validate';

const partial = (events: readonly EventJson[]): RolloutJson => ({
  format: ROLLOUT_FORMAT,
  id: 'live',
  vocab: 272,
  tokenizer: 'byte',
  events: structuredClone([...events]),
});

describe('runEpisode onEvent', () => {
  for (const kind of EDITOR_KINDS) {
    for (const envId of ['lookup', 'collect'] as const) {
      it(`${envId} / ${kind}: the events seen live are the rollout's events as they happen, and every snapshot validates`, async () => {
        const env = createEnv(envId === 'lookup' ? { id: 'lookup', hops: 3, distractors: 1, filler: 20 } : { id: 'collect', pages: 3, decoys: 1, filler: 20 });
        const editor = createEditor(kind === 'none' ? editorSpec('none') : editorSpec(kind, { budget: 90 }));
        const seen: EventJson[] = [];
        let edits = 0;
        const result = await runEpisode(env, editor, createExpertPolicy(env, { noise: envId === 'collect' ? 0.3 : 0 }), 7, {
          onEvent(events, event) {
            expect(events[events.length - 1]).toBe(event);
            seen.push(structuredClone(event));
            if (event.op === 'edit') edits++;
            validateRollout(partial(events), { file: `${kind}.json` });
          },
        });
        expect(seen).toEqual(result.rollout.events);
        expect(edits).toBe(result.K);
        if (kind !== 'none' && kind !== 'fold') expect(result.K).toBeGreaterThan(0);
      });
    }
  }

  it('a random policy with many edits: the events seen live equal the final ones', async () => {
    const env = createEnv({ id: 'lookup', hops: 4, distractors: 0, filler: 0 });
    const seen: EventJson[] = [];
    const result = await runEpisode(env, createEditor(editorSpec('window', { budget: 40 })), createRandomPolicy({ stopRate: 0.3 }), 5, {
      maxTurns: 12,
      onEvent: (_events, event) => void seen.push(structuredClone(event)),
    });
    expect(result.K).toBe(2); // seed 5 edits twice
    expect(seen).toEqual(result.rollout.events);
  });
});
