// Proof that a generated rollout records what happened: it passes the core validator, and its
// conditioning tree gives every target the live prefix the policy actually decoded from (the
// decode records' views), token for token. Tests run it on every episode; so can `mw generate`.

import { validateRollout } from '../rollout/validate';
import { deriveTree } from '../tree';
import type { EpisodeResult } from './episode';

export interface EpisodeCheck {
  K: number;
  targets: number;
  branches: number;
}

function sameIds(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function verifyEpisode(result: EpisodeResult): EpisodeCheck {
  const id = result.rollout.id;
  const fail = (why: string): never => {
    throw new Error(`rollout ${id}: ${why}`);
  };
  const rollout = validateRollout(result.rollout, { file: id });
  const tree = deriveTree(rollout);
  if (tree.K !== result.K) fail(`tree has K=${tree.K}, the episode made ${result.K} edits`);
  let targets = 0;
  for (const d of result.decodes) {
    d.viewIds.forEach((v, i) => {
      if (rollout.tokens[v] !== d.viewTokens[i]) fail(`decode ${d.step}: id ${v} holds ${rollout.tokens[v]}, the policy saw ${d.viewTokens[i]}`);
    });
    const prefix = d.viewIds.slice();
    d.actIds.forEach((t, i) => {
      if (!rollout.isTarget[t]) fail(`decode ${d.step}: action id ${t} is not a target`);
      if (rollout.tokens[t] !== d.actTokens[i]) fail(`decode ${d.step}: action id ${t} holds ${rollout.tokens[t]}, the policy wrote ${d.actTokens[i]}`);
      const live = tree.livePrefix(t);
      if (!sameIds(live, prefix)) {
        fail(`decode ${d.step}: target ${t} has live prefix of ${live.length} ids in the tree, the policy saw ${prefix.length}`);
      }
      prefix.push(t);
      targets++;
    });
  }
  if (targets !== rollout.targets.length) fail(`${rollout.targets.length} targets, ${targets} generated tokens`);
  return { K: tree.K, targets, branches: tree.branches.length };
}
