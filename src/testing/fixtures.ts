// The public fixtures of ../shared/fixtures (beside the repository, in CI too), for tests.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseRolloutFile } from '../rollout/parse';
import type { Rollout } from '../rollout/rollout';

export function sharedFixturePath(name: string): string {
  return fileURLToPath(new URL(`../../../shared/fixtures/${name}`, import.meta.url));
}

export function readSharedFixture(name: string): string {
  return readFileSync(sharedFixturePath(name), 'utf8');
}

/** SPEC §3's worked example, validated. */
export function workedExample(): Rollout {
  return parseRolloutFile(readSharedFixture('worked-example.json'), 'worked-example.json')[0];
}

/** Its figures, as SPEC §3 states them. */
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
