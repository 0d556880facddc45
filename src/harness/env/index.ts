// Environments by id, from plain-data specs (what the CLI, the trainer and the browser worker pass).

import { COLLECT_DEFAULTS, createCollectEnv, type CollectOptions } from './collect';
import { LOOKUP_DEFAULTS, createLookupEnv, type LookupOptions } from './lookup';
import type { Env } from './types';

export type { Env, Episode, ExpertMove, Observation, Outcome, StepResult } from './types';

export type EnvSpec = ({ id: 'lookup' } & Partial<LookupOptions>) | ({ id: 'collect' } & Partial<CollectOptions>);
export type EnvId = EnvSpec['id'];
export const ENV_IDS: readonly EnvId[] = ['lookup', 'collect'];

/**
 * The task the demo checkpoint (public/models/demo.safetensors, scripts/train-demo.sh) was trained
 * on, and the token budget at which the memory editors edit each of its episodes twice: `collect`
 * with three pages (single-digit numbers), no decoys and 20 filler characters. The expert's notes
 * (`have kq`) and the summaries restate codes from observations an edit evicts, so a flattened tape
 * holds evidence the live view has lost: the paper's setting for naive-full's stale context.
 */
export const DEMO_TASK = { env: { id: 'collect', pages: 3, decoys: 0, filler: 20 }, budget: 100 } as const satisfies { env: EnvSpec; budget: number };

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

const ENV_DEFAULTS: Readonly<Record<EnvId, Readonly<Record<string, number>>>> = {
  lookup: LOOKUP_DEFAULTS as unknown as Record<string, number>,
  collect: COLLECT_DEFAULTS as unknown as Record<string, number>,
};

/**
 * An environment from its command-line form: an id, optionally with difficulty knobs after a
 * colon, e.g. `lookup` or `lookup:hops=2,distractors=1,filler=0`. Unknown ids and knobs, and
 * values that are not integers, are refused with the valid choices; ranges are checked by
 * building the environment once.
 */
export function parseEnvSpec(text: string): EnvSpec {
  const colon = text.indexOf(':');
  const id = colon < 0 ? text : text.slice(0, colon);
  if (!(ENV_IDS as readonly string[]).includes(id)) throw new Error(`unknown environment ${JSON.stringify(id)} (one of ${ENV_IDS.join(', ')})`);
  const defaults = ENV_DEFAULTS[id as EnvId];
  const spec: Record<string, unknown> = { id };
  if (colon >= 0) {
    for (const pair of text.slice(colon + 1).split(',')) {
      const m = /^([a-z]+)=(\d+)$/.exec(pair);
      if (!m) throw new Error(`environment knob ${JSON.stringify(pair)} is not NAME=INTEGER (${id}: ${Object.keys(defaults).join(', ')})`);
      if (!(m[1] in defaults)) throw new Error(`${id} has no knob ${JSON.stringify(m[1])} (one of ${Object.keys(defaults).join(', ')})`);
      spec[m[1]] = Number(m[2]);
    }
  }
  createEnv(spec as EnvSpec);
  return spec as EnvSpec;
}

/** The command-line form of a spec: the inverse of parseEnvSpec (knobs left at their default omitted). */
export function formatEnvSpec(spec: EnvSpec | EnvId): string {
  if (typeof spec === 'string') return spec;
  const { id, ...knobs } = spec as { id: EnvId } & Record<string, number>;
  const set = Object.entries(knobs).filter(([name, value]) => value !== undefined && value !== ENV_DEFAULTS[id][name]);
  return set.length === 0 ? id : `${id}:${set.map(([name, value]) => `${name}=${value}`).join(',')}`;
}
