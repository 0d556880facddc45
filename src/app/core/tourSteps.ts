// The guided tour as data: ten steps that tell the paper's story on the live views. Each step says
// what to show (a rollout, a target, a method, the demo model, a training configuration), which page
// elements it talks about (by their data attributes, or a band of ids across the staircase), and a
// caption in Markdown whose `#anchor` links are glossary entries. The store applies a step; the tour
// view draws it. Steps 1–8 run on the worked example in words (public/examples/worked-words.json):
// docs/tree.md's worked example, same ids and tree, told as an agent story in GPT-2 words, which
// the captions cite by id and by word.
import { METHOD_BY_ID } from '../../present/palette';
import type { Method } from '../../plan/types';
import { liveVerdict, stateWords, type DriftData } from './drift';
import { formatEffect } from '../../present/number';
import type { ViewData } from './viewData';
import type { ColorMode, RowMode } from '../url/schema';

/** What a step points at: a CSS selector (data attributes), or physical ids [from, to) across the staircase. */
export type TourHighlight = string | { band: readonly [number, number]; label: string };

export interface TourSetup {
  /** Built-in example to show (load/examples.ts), and which rollout of it (default 0). */
  example: string;
  rollout?: number;
  /** Target to select; null keeps the rollout's default (its first diverging leaf). */
  target: number | null;
  method: Method;
  rows?: RowMode;
  color?: ColorMode;
  /** Load the demo checkpoint into the scoring worker (drift needs a model). */
  model?: 'demo';
  /** A training configuration from the demo checkpoint: these methods side by side. */
  train?: { methods: Method[] };
  /** Disclosure buttons to open if closed (a collapsed panel the step talks about). */
  expand?: string[];
}

export interface TourStep {
  title: string;
  /** Two or three sentences, Markdown; `[words](#entry)` links a glossary entry. */
  caption: string;
  setup: TourSetup;
  highlight: TourHighlight[];
  /** The step runs on WebGPU (scoring or training); without it the tour stops here and says why. */
  needs?: 'webgpu';
  /** A live figure from the shown rollout (and its drift), under the caption; null when not yet known. */
  readout?: (view: ViewData, drift: DriftData | null) => string | null;
  /** A button the step offers (besides Next). */
  action?: { label: string; kind: 'train-play' };
}

export const TOUR_EXAMPLE = 'worked-words';
/** The built-in example the drift and training steps show: the demo model's own rollouts under a sliding window. */
export const DRIFT_EXAMPLE = 'demo-window';
/** The two methods the training step starts side by side. */
export const TRAIN_METHODS: Method[] = ['naive-compressed', 'packed-4d'];

const tour = (s: string) => `[data-tour="${s}"]`;

export const TOUR_STEPS: readonly TourStep[] = [
  {
    title: 'A rollout under a memory editor',
    caption:
      'An agent told to “Fix tests” reads the prompt and observations and writes actions, one word at a time; each token gets an id, 0, 1, 2, …, in the order it was created. ' +
      "When the context grows long, the harness's memory editor rewrites it: here its first [edit](#edit) compacts the context. " +
      'The old turn, “run tests” and “parser test fails” (ids 2–6), is evicted and a two-word summary, “parser broken” (ids 9–10), takes its place.',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'naive-compressed', rows: 'step', color: 'state' },
    highlight: [tour('staircase'), { band: [2, 7], label: 'evicted by edit 1' }, { band: [9, 11], label: 'summary' }],
    readout: (view) =>
      `This rollout: ${view.tree.K} edits, ${view.rollout.length} tokens created, ${view.rollout.targets.length} of them written by the policy.`,
  },
  {
    title: 'The staircase: what the policy saw',
    caption:
      'Each row is one decode step: the [live view](#live-view) the policy read when it wrote that row’s yellow token. ' +
      'Going down, rows grow as tokens are appended; at each dashed line an [edit](#edit) rewrites the view, and evicted tokens turn dark. ' +
      'The outlined row is target 13, the word “add” of “add comma”, written after edit 1: it saw the summary, not the evicted turn.',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'naive-compressed', rows: 'step', color: 'state' },
    highlight: [tour('staircase-canvas'), tour('staircase-legend')],
  },
  {
    title: 'An edit forks the history',
    caption:
      'Tokens written before an edit were conditioned on the old view, tokens after it on the new one: the rollout is a [conditioning tree](#conditioning-tree), not a sequence. ' +
      'Its [K](#k) = 2 edits make K + 1 = 3 [branches](#branch), b0, b1 and b2, each the context one segment’s tokens were written from. ' +
      'The orange dots are the [junctions](#junction) where a branch leaves the ones before it.',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'naive-compressed' },
    highlight: [tour('tree'), tour('junction'), tour('stat-K'), tour('stat-branches')],
  },
  {
    title: 'A target’s live prefix',
    caption:
      'Target 13 (“add”) was written in segment 1, so its context is branch b1 up to it: its [live prefix](#live-prefix) 0 1 9 10 7 8 11 12, “Fix tests parser broken open parser missing comma”, exactly what the policy saw. ' +
      'A token is generated once, from one view, so every target has exactly one live prefix: the path from the root to its node in the tree (ringed).',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'logit-tree' },
    highlight: [tour('tree-selected'), tour('fact-live-prefix'), '[data-testid="prefix-strips"] [data-row="live"]'],
  },
  {
    title: 'Naive-Compressed: time-travel leakage',
    caption:
      '[Naive-Compressed](#naive-compressed) scores targets on the [final walk](#final-walk), the context the rollout ends with; the four it lost, 2, 3, 7 and 8, are [dropped](#dropped-target): not scored, not trained. ' +
      'But target 13’s evidence, “open parser” and “missing comma” (ids 7, 8, 11, 12), was evicted later, by edit 2, so it is scored without 4 ids it did see ([eviction mass](#eviction-mass) 4): a later edit reaches back in time ([time-travel leakage](#time-travel-leakage)). ' +
      'Without its evidence the model finds the token less likely: this [drift](#signed-drift) is mostly negative.',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'naive-compressed' },
    highlight: [
      '[data-testid="method-table"] tr[data-method="naive-compressed"]',
      tour('fact-eviction-mass'),
      { band: [7, 9], label: 'evicted by edit 2' },
      { band: [11, 13], label: 'evicted by edit 2' },
    ],
  },
  {
    title: 'Naive-Full: stale context',
    caption:
      '[Naive-Full](#naive-full) scores every target on the [physical tape](#physical-tape): every token ever created, evicted ones left in. ' +
      'Target 15, “run” of the last “run tests”, then sees 9 ids the policy no longer had when it wrote it ([stale context](#stale-context), hatched in the strips). ' +
      'When that old evidence still helps, the model is surer than the policy was: the drift is positive.',
    setup: { example: TOUR_EXAMPLE, target: 15, method: 'naive-full' },
    highlight: [
      '[data-testid="method-table"] tr[data-method="naive-full"]',
      '[data-testid="prefix-strips"] [data-row="naive-full"]',
      { band: [2, 9], label: 'evicted' },
    ],
  },
  {
    title: 'Exact replay: LogitTree and the packed 4D mask',
    caption:
      'The exact methods score every target on its live prefix. [LogitTree](#logittree) runs one sequence per branch, K + 1 forward passes; the [packed 4D mask](#packed-4d-mask) packs the tree into one sequence in which each row attends only to its own path (the white row is target 13). ' +
      'Both give the same logits and gradients (Theorem 1); the price is [N_packed](#n_packed) tokens instead of the final walk’s [N_final](#n_final).',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'packed-4d' },
    highlight: [tour('mask-packed-4d'), tour('stat-packedLength'), tour('stat-finalWalkLength'), '[data-testid="method-table"] tr[data-method="packed-4d"]'],
    readout: (view) => {
      const f = view.tree.figures;
      return `N_packed = ${f.packedLength}, N_final = ${f.finalWalkLength}: one forward over ${(f.packedLength / f.finalWalkLength).toFixed(2)}× the final walk, instead of ${f.branches} forwards.`;
    },
  },
  {
    title: 'SDCC: a compressed student, a live teacher',
    caption:
      '[SDCC](#sdcc) keeps the cheap final-walk pass as a student and adds one term. ' +
      'At each [diverging leaf](#diverging-leaf) (here [D](#d) = 2: targets 13 and 14) a teacher with the same weights, under stop-gradient, reads the live prefix, and a forward KL ([KL_SDCC](#kl_sdcc)) pulls the student towards it. ' +
      'Targets 15 and 16, the last “run tests”, need no teacher (their final prefix is their live prefix), and the dropped targets 2, 3, 7 and 8 get neither task loss nor teacher: like Naive-Compressed, SDCC leaves them untrained.',
    setup: { example: TOUR_EXAMPLE, target: 13, method: 'sdcc' },
    highlight: ['[data-testid="method-table"] tr[data-method="sdcc"]', '[data-testid="method-sequence"]', tour('stat-divergingLeaves')],
  },
  {
    title: 'Drift, measured',
    caption:
      'The demo model, a small GPT-2 trained in this workbench, now scores every target of a generated rollout under each method, on WebGPU. ' +
      'Read [μ](#signed-drift) vs live, the mean of method minus live-prefix log-probability, against the noise floor that LogitTree and the 4D mask set (their round-off): Naive-Compressed below it, Naive-Full above it where stale evidence helps and at the floor where it changes nothing measurable. ' +
      'The staircase and tree now colour each target by that difference.',
    setup: { example: DRIFT_EXAMPLE, target: null, method: 'naive-compressed', color: 'drift', model: 'demo' },
    highlight: [tour('drift')],
    needs: 'webgpu',
    readout: (_view, drift) => {
      if (!drift) return null;
      const verdict = liveVerdict(drift);
      const parts = drift.methods
        .filter((m) => !m.error)
        .map((m) => `${METHOD_BY_ID[m.method].label} ${formatEffect(m.vsLive.mu)} (${stateWords(verdict.methods.find((v) => v.method === m.method)!.state)})`);
      return `μ vs live on this rollout: ${parts.join(' · ')}. ${verdict.conclusion}`;
    },
  },
  {
    title: 'Training, live',
    caption:
      'Train two methods side by side from the demo model, with the same seed and data: press Start. ' +
      'Naive-Compressed trains on contexts the policy never saw, so its [conditioning drift](#conditioning-drift) stays above zero; the packed 4D mask trains on the live prefixes and reads 0. ' +
      'The held-out EM chart shows what each one learns.',
    setup: {
      example: DRIFT_EXAMPLE,
      target: null,
      method: 'packed-4d',
      train: { methods: TRAIN_METHODS },
      expand: ['[data-testid="train-panel"] .disclosure'],
    },
    highlight: ['[data-testid="train-start"]', '[data-testid="chart-drift"]', '[data-testid="chart-reward"]'],
    needs: 'webgpu',
    action: { label: 'Start training', kind: 'train-play' },
  },
];

/** The first step (1-based) at or after `from` that needs WebGPU, or null. */
export function firstGpuStep(from = 1): number | null {
  for (let n = from; n <= TOUR_STEPS.length; n++) if (TOUR_STEPS[n - 1].needs === 'webgpu') return n;
  return null;
}
