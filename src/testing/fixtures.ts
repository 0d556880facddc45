// The repository's fixtures (fixtures/ at its root: the worked example, the calls example), for tests.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseRolloutFile } from '../rollout/parse';
import type { Rollout } from '../rollout/rollout';

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../../fixtures/${name}`, import.meta.url));
}

export function readFixture(name: string): string {
  return readFileSync(fixturePath(name), 'utf8');
}

/** the worked example (docs/tree.md), validated. */
export function workedExample(): Rollout {
  return parseRolloutFile(readFixture('worked-example.json'), 'worked-example.json')[0];
}

/** Its figures, as docs/tree.md states them. */
export const WORKED_EXAMPLE_FIGURES = {
  K: 2,
  branches: 3,
  physicalLength: 17,
  finalWalkLength: 8,
  packedLength: 21,
  targets: 8,
  droppedTargets: 4,
  divergingLeaves: 2,
  evictionMassTotal: 8,
  evictionMassMax: 4,
} as const;
