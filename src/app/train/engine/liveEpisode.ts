// Watching an episode while it runs: wraps the episode's memory editor and policy so that every
// append and every edit becomes a docs/rollout-format.md event the moment the harness makes it. Edits are computed
// with the harness's own applyPlan on the same view, plan and next id, so the events match the
// rollout runEpisode returns at the end (tested), and the partial rollout validates at any point.
// Tokens of the action being decoded stream in through `token` when the policy reports them.

import type { AppendEventJson, EventJson } from '../../../rollout/format';
import type { Editor } from '../../../harness/editors/types';
import { applyPlan, type LiveView } from '../../../harness/live';
import type { Policy, PolicySession } from '../../../harness/policy';

export type LiveChange = 'append' | 'edit' | 'token' | 'act';

export interface LiveEpisode {
  editor: Editor;
  policy: Policy;
  /** The events so far (a partial action last while one is being decoded). */
  readonly events: readonly EventJson[];
  /** Reports one decoded token of the current action (from a policy that streams). */
  token(token: number, logprob: number): void;
}

export function observeEpisode(editor: Editor, policy: Policy, onChange: (events: readonly EventJson[], change: LiveChange) => void): LiveEpisode {
  const events: EventJson[] = [];
  let nextId = 0;
  /** The act event being streamed, while an action is decoded. */
  let partial: (AppendEventJson & { tokens: number[]; logprobs: number[] }) | null = null;

  /** Blocks the harness appended since the last look (the prompt, observations). */
  const sync = (view: LiveView) => {
    const fresh = view.blocks.filter((b) => b.first >= nextId).sort((a, b) => a.first - b.first);
    let changed = false;
    for (const b of fresh) {
      if (b.first !== nextId) throw new Error(`live episode: expected a block at id ${nextId}, found one at ${b.first}`);
      if (b.role === 'summary') throw new Error('live episode: a summary block appeared outside an edit');
      events.push({ op: 'append', role: b.role, tokens: b.tokens.slice() });
      nextId += b.tokens.length;
      changed = true;
    }
    if (changed) onChange(events, 'append');
  };

  const edit = (view: LiveView, plan: Parameters<typeof applyPlan>[1]) => {
    const applied = applyPlan(view, plan, nextId);
    events.push(applied.event);
    nextId = applied.nextId;
    onChange(events, 'edit');
  };

  const watchedEditor: Editor = {
    spec: editor.spec,
    beforeDecode(view, summarize) {
      sync(view);
      const plan = editor.beforeDecode(view, summarize);
      if (plan) edit(view, plan);
      return plan;
    },
    onAct(view, act) {
      const claim = editor.onAct(view, act);
      if (claim && 'edit' in claim) edit(view, claim.edit);
      return claim;
    },
  };

  const watchedPolicy: Policy = {
    name: policy.name,
    async start(info) {
      const session = await policy.start(info);
      const watched: PolicySession = {
        async act(request) {
          partial = null;
          const action = await session.act(request);
          if (partial) events.pop();
          partial = null;
          events.push({ op: 'append', role: 'act', tokens: action.tokens.slice(), logprobs: action.logprobs.slice() });
          nextId += action.tokens.length;
          onChange(events, 'act');
          return action;
        },
        close: session.close ? () => session.close!() : undefined,
      };
      if (session.onEdit) watched.onEdit = (view, firstChanged) => session.onEdit!(view, firstChanged);
      return watched;
    },
  };

  return {
    editor: watchedEditor,
    policy: watchedPolicy,
    events,
    token(token, logprob) {
      if (!partial) {
        partial = { op: 'append', role: 'act', tokens: [], logprobs: [] };
        events.push(partial);
      }
      partial.tokens.push(token);
      partial.logprobs.push(logprob);
      onChange(events, 'token');
    },
  };
}
