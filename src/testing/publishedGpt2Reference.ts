// The float64 reference of e2e/gpt2.spec.ts's published-layout test, computed once and committed
// (e2e/gpt2-published.reference.json): GPT-2's vocabulary makes every logits row 50257 wide, and the
// reference forward of every method's sequences took ~70 s of the spec on an idle runner (over 200 s
// under load). The spec rebuilds the checkpoint and the imported session (cheap) and checks their
// fingerprints against the file's, so a change to either fails with the command that regenerates it:
// node --import ./scripts/register.mjs scripts/gpt2-e2e-reference.mjs

import { createHash } from 'node:crypto';
import { forwardKlRow } from '../gpu/kernels/kl-sdcc/kl-sdcc.reference';
import { loadCheckpoint } from '../model/checkpoint';
import { randomWeights } from '../model/random-weights';
import { referenceForward } from '../model/reference/model';
import { buildPlan } from '../plan';
import { loadRolloutFile, type Rollout } from '../rollout';
import { deriveTree, type ConditioningTree } from '../tree';
import { publishedGpt2Checkpoint } from './publishedGpt2';

export const SCORED_METHODS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d'] as const;

export const REGENERATE = 'node --import ./scripts/register.mjs scripts/gpt2-e2e-reference.mjs';

/** What the page is handed: the checkpoint's bytes (random weights, seed 17) and the session imported as GPT-2 word pieces. */
export interface PublishedGpt2Scene {
  bytes: Uint8Array;
  rollout: Rollout;
  tree: ConditioningTree;
  /** sha256 of the checkpoint's bytes and of the rollout's JSON: what the committed reference was computed from. */
  fingerprint: { checkpoint: string; rollout: string };
}

/** The committed file: per method, [target id, float64 log-probability of its token]; SDCC's mean KL at the diverging leaves. */
export interface PublishedGpt2Reference {
  regenerate: string;
  fingerprint: PublishedGpt2Scene['fingerprint'];
  logprobs: Record<(typeof SCORED_METHODS)[number], [number, number][]>;
  klSdcc: number;
  divergingLeaves: number;
}

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

export async function publishedGpt2Scene(sessionText: string): Promise<PublishedGpt2Scene> {
  // GPT-2's head size 64, vocabulary 50257, positions for the whole session: the file holds no config.
  const bytes = publishedGpt2Checkpoint(randomWeights({ vocabSize: 50257, nEmbd: 64, nLayer: 2, nHead: 1, nPositions: 1024 }, 17));
  const [rollout] = (await loadRolloutFile(sessionText, 'session.jsonl', { tokenizer: 'gpt2' })).rollouts;
  return { bytes, rollout, tree: deriveTree(rollout), fingerprint: { checkpoint: sha256(bytes), rollout: sha256(JSON.stringify(rollout)) } };
}

/** Every method's targets scored by the float64 reference forward, and SDCC's KL from the diverging leaves' rows. */
export function computePublishedGpt2Reference(scene: PublishedGpt2Scene): PublishedGpt2Reference {
  const weights = loadCheckpoint(scene.bytes);
  const { tree } = scene;
  const V = weights.config.vocabSize;
  const logprobs = Object.fromEntries(SCORED_METHODS.map((m) => [m, [] as [number, number][]])) as PublishedGpt2Reference['logprobs'];
  /** The logits rows of the diverging leaves, under their live prefix (LogitTree) and their final prefix (the student). */
  const rows = new Map(['logit-tree', 'naive-compressed'].map((m) => [m, new Map<number, Float64Array>()]));
  for (const method of SCORED_METHODS) {
    for (const seq of buildPlan(tree, method).sequences) {
      if (!seq.targets.length) continue;
      const { logits } = referenceForward(weights, seq);
      for (const t of seq.targets) {
        const row = logits.subarray(t.predictor * V, (t.predictor + 1) * V);
        logprobs[method].push([t.id, logSoftmaxAt(row, t.token)]);
        if (tree.diverging[t.id]) rows.get(method)?.set(t.id, Float64Array.from(row));
      }
    }
    logprobs[method].sort((a, b) => a[0] - b[0]);
  }
  const leaves = Array.from(tree.divergingLeaves);
  const klSdcc =
    leaves.reduce((s, id) => s + forwardKlRow(rows.get('logit-tree')!.get(id)!, 0, rows.get('naive-compressed')!.get(id)!, 0, V), 0) / leaves.length;
  return { regenerate: REGENERATE, fingerprint: scene.fingerprint, logprobs, klSdcc, divergingLeaves: leaves.length };
}

function logSoftmaxAt(logits: ArrayLike<number>, token: number): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp(logits[i] - max);
  return logits[token] - (max + Math.log(sum));
}
