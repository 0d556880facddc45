// Built-in examples, one click away, all shipped under public/examples/ so the app needs nothing
// outside its build: the hand-made worked example (docs/tree.md) and the same tree in words (the tour's); rollouts the demo model played
// (public/models/demo.safetensors, greedy, its own log-probabilities recorded), made by the `mw`
// command in `made` (scripts/examples.mjs runs them again); and one demo data set the harness
// generates in the worker with the scripted expert, for an edit the policy itself triggers.
import type { DemoConfig } from '../protocol/parse';
import { fetchShipped } from './shipped';

export type Example = {
  name: string;
  label: string;
  description: string;
} & (
  | {
      kind: 'file';
      /** Path relative to the app's base URL (under public/). */
      path: string;
      /** The `mw` arguments that wrote the file (without `--out`), for a file a command made. */
      made?: readonly string[];
    }
  | { kind: 'generated'; config: DemoConfig }
);

/** The demo model playing its task (docs/experiments: collect, three pages) under a memory editor at a budget of 100 tokens. */
function demoModelRun(editor: string): readonly string[] {
  return [
    'generate',
    '--ckpt',
    'public/models/demo.safetensors',
    '--env',
    'collect:decoys=0,filler=20',
    '--editor',
    editor,
    '--budget',
    '100',
    '--n',
    '4',
    '--seed',
    '1',
    '--temperature',
    '0',
  ];
}

export const EXAMPLES: readonly Example[] = [
  {
    kind: 'file',
    name: 'worked-example',
    label: 'Worked example',
    description: 'A hand-made rollout: two edits, three branches, 8 targets, 2 diverging leaves',
    path: 'examples/worked-example.json',
  },
  {
    kind: 'file',
    name: 'demo-window',
    label: 'Demo model · window',
    description:
      'The demo model (public/models/demo.safetensors) solving the collect task under a sliding window that evicts old turns; 4 rollouts with its own log-probabilities',
    path: 'examples/demo-window.jsonl',
    made: demoModelRun('window'),
  },
  {
    kind: 'file',
    name: 'demo-compact',
    label: 'Demo model · compact',
    description: 'The demo model solving the collect task while a compacting editor replaces old turns by summaries; 4 rollouts with its own log-probabilities',
    path: 'examples/demo-compact.jsonl',
    made: demoModelRun('compact'),
  },
  {
    kind: 'generated',
    name: 'lookup-fold',
    label: 'Expert · fold',
    description:
      'Harness demo: the lookup task, the policy folds its own context (model-triggered edits), scripted expert policy (its log-probabilities are 0, not a model’s); 4 rollouts',
    config: { env: 'lookup', editor: 'fold', n: 4, seed: 1 },
  },
  {
    kind: 'file',
    name: 'worked-words',
    label: 'Worked example · in words',
    description:
      'The worked example as an agent story in GPT-2 words, with the same ids and tree: “Fix tests”, it runs the tests, a parser test fails; a summary “parser broken” replaces the turn; it adds a comma and runs the tests again',
    path: 'examples/worked-words.json',
  },
];

export const DEFAULT_EXAMPLE = EXAMPLES[0].name;

export function findExample(name: string): Example | undefined {
  return EXAMPLES.find((e) => e.name === name);
}

/** The example's file name as the validator names it in messages. */
export function exampleFileName(example: Example): string {
  return example.kind === 'file' ? example.path.split('/').pop()! : `${example.name}.jsonl`;
}

export async function fetchExample(example: Example, generate: (config: DemoConfig) => Promise<string>): Promise<Blob> {
  if (example.kind === 'generated') return new Blob([await generate(example.config)], { type: 'application/x-ndjson' });
  return (await fetchShipped(example.path)).blob();
}
