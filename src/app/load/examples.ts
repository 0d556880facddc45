// Built-in examples, one click away: the worked example (docs/tree.md) (shipped under public/examples/ so
// the app needs nothing outside its build), and demo data sets the harness generates in the worker
// (an environment, a memory editor, the expert policy), deterministic from their seed.
import type { DemoConfig } from '../protocol/parse';

export type Example = {
  name: string;
  label: string;
  description: string;
} & ({ kind: 'file'; /** Path relative to the app's base URL. */ path: string } | { kind: 'generated'; config: DemoConfig });

export const EXAMPLES: readonly Example[] = [
  {
    kind: 'file',
    name: 'worked-example',
    label: 'Worked example',
    description: 'A hand-made rollout: two edits, three branches, 8 targets, 2 diverging leaves',
    path: 'examples/worked-example.json',
  },
  {
    kind: 'generated',
    name: 'lookup-compact',
    label: 'Lookup · compact',
    description: 'Harness demo: the lookup task, a compacting editor (summaries replace old turns), expert policy; 4 rollouts',
    config: { env: 'lookup', editor: 'compact', n: 4, seed: 1 },
  },
  {
    kind: 'generated',
    name: 'collect-window',
    label: 'Collect · window',
    description: 'Harness demo: the collect task, a sliding-window editor, expert policy; 4 rollouts',
    config: { env: 'collect', editor: 'window', n: 4, seed: 1 },
  },
  {
    kind: 'generated',
    name: 'lookup-fold',
    label: 'Lookup · fold',
    description: 'Harness demo: the lookup task, the policy folds its own context (model-triggered edits), expert policy; 4 rollouts',
    config: { env: 'lookup', editor: 'fold', n: 4, seed: 1 },
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
  const response = await fetch(new URL(example.path, document.baseURI));
  if (!response.ok) throw new Error(`${example.path}: HTTP ${response.status}`);
  return response.blob();
}
