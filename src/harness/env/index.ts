// Environments by id, from plain-data specs (what the CLI, the trainer and the browser worker pass).

import { createCollectEnv, type CollectOptions } from './collect';
import { createLookupEnv, type LookupOptions } from './lookup';
import type { Env } from './types';

export type { Env, Episode, ExpertMove, Observation, Outcome, StepResult } from './types';

export type EnvSpec = ({ id: 'lookup' } & Partial<LookupOptions>) | ({ id: 'collect' } & Partial<CollectOptions>);
export type EnvId = EnvSpec['id'];
export const ENV_IDS: readonly EnvId[] = ['lookup', 'collect'];

export function createEnv(spec: EnvSpec | EnvId): Env {
  const s: EnvSpec = typeof spec === 'string' ? ({ id: spec } as EnvSpec) : spec;
  switch (s.id) {
    case 'lookup': {
      const { id: _, ...options } = s;
      return createLookupEnv(options);
    }
    case 'collect': {
      const { id: _, ...options } = s;
      return createCollectEnv(options);
    }
    default:
      throw new Error(`unknown environment ${JSON.stringify((s as { id: unknown }).id)} (one of ${ENV_IDS.join(', ')})`);
  }
}
