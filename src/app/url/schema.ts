// The shareable view state, declared once: every field a link must reproduce, its type, its
// default and its allowed values (read and written by ./fields.ts). Serialising writes only fields
// that differ from their default; parsing ignores unknown keys and values it cannot read.

import { checkSampling, isFullSampling, type SamplingOptions } from '../../harness/policies/model';
import { METHODS, type Method } from '../../plan/types';
import { hasFields, readFields, writeFields, type Field } from './fields';

export const ROW_MODES = ['step', 'segment'] as const;
export type RowMode = (typeof ROW_MODES)[number];
export const COLOR_MODES = ['state', 'drift'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

export interface UrlState {
  source: string | null;
  rollout: string | null;
  target: number | null;
  method: Method;
  rows: RowMode;
  color: ColorMode;
  sampler: string | null;
  tour: number | null;
  glossary: string | null;
  play: string | null;
}

/** The schema. Order is the order of keys in a written URL. */
export const URL_SCHEMA: { [K in keyof UrlState]: Field & { default: UrlState[K] } } = {
  source: {
    type: 'string',
    key: 'src',
    default: null,
    help: 'rollout source: example:NAME, file:NAME for the set last opened in this browser, or playground:NAME (the rollout in play)',
  },
  rollout: { type: 'string', key: 'rollout', default: null, help: 'rollout id within a JSONL set' },
  target: { type: 'int', key: 'target', default: null, min: 0, help: 'selected target (physical id)' },
  method: {
    type: 'enum',
    key: 'method',
    default: 'naive-compressed',
    values: METHODS,
    help: 'replay method compared against the live prefix',
  },
  rows: {
    type: 'enum',
    key: 'rows',
    default: 'step',
    values: ROW_MODES,
    help: 'staircase rows: one per decode step or one per segment',
  },
  color: {
    type: 'enum',
    key: 'color',
    default: 'state',
    values: COLOR_MODES,
    help: "target cells coloured by token state, or by drift (the method's log-probability minus the live-prefix one)",
  },
  sampler: {
    type: 'string',
    key: 'sampler',
    default: null,
    help: 'the sampler the expected drift assumes, as temperature,top-k,top-p (e.g. 0.7,20,0.8); absent: temperature 1',
  },
  tour: { type: 'int', key: 'tour', default: null, min: 1, help: 'the step of the guided tour shown (1-based; a number past the last step shows the last)' },
  glossary: {
    type: 'string',
    key: 'glossary',
    default: null,
    help: 'the glossary panel, open at an entry (an anchor of docs/glossary.md) or at its top (all)',
  },
  play: {
    type: 'string',
    key: 'play',
    default: null,
    help: "the playground's rollout itself, deflated and in base64url (src/app/url/playLink.ts), with src=playground:NAME",
  },
};

/** Where an open set came from; in the URL as `example:NAME`, `file:NAME` or `playground:NAME` (the rollout itself in `play`). */
export type SourceRef = { kind: 'example' | 'file' | 'playground'; name: string };

export function sourceKey(source: SourceRef): string {
  return `${source.kind}:${source.name}`;
}

export function parseSourceKey(key: string): SourceRef | null {
  const m = /^(example|file|playground):(.+)$/.exec(key);
  return m ? { kind: m[1] as SourceRef['kind'], name: m[2] } : null;
}

/** `0.7,20,0.8`; null for temperature 1 over the whole vocabulary (the default). */
export function formatSampler(s: Required<SamplingOptions>): string | null {
  if (isFullSampling(s)) return null;
  return `${s.temperature},${s.topK},${s.topP}`;
}

/** The sampler a `sampler` value names, or null when it names none. */
export function parseSampler(text: string | null): Required<SamplingOptions> | null {
  if (text === null) return null;
  const parts = text.split(',');
  if (parts.length !== 3 || parts.some((p) => p.trim() === '')) return null;
  const [temperature, topK, topP] = parts.map(Number);
  try {
    return checkSampling({ temperature, topK, topP });
  } catch {
    return null;
  }
}

export function defaultUrlState(): UrlState {
  const entries = Object.entries(URL_SCHEMA).map(([name, field]) => [name, field.default]);
  return Object.fromEntries(entries) as UrlState;
}

/** Reads a query string (with or without the leading `?`); unreadable values fall back to defaults. */
export function parseUrlState(search: string): UrlState {
  return readFields<UrlState>(URL_SCHEMA, new URLSearchParams(search), defaultUrlState());
}

/** Writes the non-default fields as a query string (`?a=1&b=2`, or '' when all are defaults). */
export function serializeUrlState(state: UrlState): string {
  const text = writeFields<UrlState>(URL_SCHEMA, state, defaultUrlState()).toString();
  return text ? `?${text}` : '';
}

/** True when the query string carries any field of the schema. */
export function hasUrlState(search: string): boolean {
  return hasFields<UrlState>(URL_SCHEMA, new URLSearchParams(search));
}
