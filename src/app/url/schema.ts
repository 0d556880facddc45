// The shareable view state, declared once (after TensorFlow Playground's state.ts): every field a
// link must reproduce, its type, its default and its allowed values. Serialising writes only
// fields that differ from their default; parsing ignores unknown keys and values it cannot read.

import { checkSampling, isFullSampling, type SamplingOptions } from '../../harness/policies/model';

export type FieldType = 'string' | 'int' | 'enum';

interface FieldBase<T> {
  /** Query-string key. */
  key: string;
  default: T;
  help: string;
}
export interface StringField extends FieldBase<string | null> {
  type: 'string';
}
export interface IntField extends FieldBase<number | null> {
  type: 'int';
  min?: number;
}
export interface EnumField<V extends string = string> extends FieldBase<V> {
  type: 'enum';
  values: readonly V[];
}
export type Field = StringField | IntField | EnumField;

export const METHOD_IDS = ['naive-compressed', 'naive-full', 'logit-tree', 'packed-4d', 'sdcc'] as const;
export type MethodId = (typeof METHOD_IDS)[number];
export const ROW_MODES = ['step', 'segment'] as const;
export type RowMode = (typeof ROW_MODES)[number];
export const COLOR_MODES = ['state', 'drift'] as const;
export type ColorMode = (typeof COLOR_MODES)[number];

/** The schema. Order is the order of keys in a written URL. */
export const URL_SCHEMA = {
  source: {
    type: 'string',
    key: 'src',
    default: null,
    help: 'rollout source: example:NAME, or file:NAME for the set last opened in this browser',
  } satisfies StringField,
  rollout: { type: 'string', key: 'rollout', default: null, help: 'rollout id within a JSONL set' } satisfies StringField,
  target: { type: 'int', key: 'target', default: null, min: 0, help: 'selected target (physical id)' } satisfies IntField,
  method: {
    type: 'enum',
    key: 'method',
    default: 'naive-compressed',
    values: METHOD_IDS,
    help: 'replay method compared against the live prefix',
  } satisfies EnumField<MethodId>,
  rows: {
    type: 'enum',
    key: 'rows',
    default: 'step',
    values: ROW_MODES,
    help: 'staircase rows: one per decode step or one per segment',
  } satisfies EnumField<RowMode>,
  color: {
    type: 'enum',
    key: 'color',
    default: 'state',
    values: COLOR_MODES,
    help: 'target cells coloured by token state, or by drift (the method\'s log-probability minus the live-prefix one)',
  } satisfies EnumField<ColorMode>,
  sampler: {
    type: 'string',
    key: 'sampler',
    default: null,
    help: 'the sampler the expected drift assumes, as temperature,top-k,top-p (e.g. 0.7,20,0.8); absent: temperature 1',
  } satisfies StringField,
} as const;

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

export interface UrlState {
  source: string | null;
  rollout: string | null;
  target: number | null;
  method: MethodId;
  rows: RowMode;
  color: ColorMode;
  sampler: string | null;
}

type Schema = typeof URL_SCHEMA;
type Name = keyof Schema;
const NAMES = Object.keys(URL_SCHEMA) as Name[];

export function defaultUrlState(): UrlState {
  const out: Record<string, unknown> = {};
  for (const name of NAMES) out[name] = URL_SCHEMA[name].default;
  return out as unknown as UrlState;
}

function readField(field: Field, raw: string): unknown {
  switch (field.type) {
    case 'string':
      return raw === '' ? undefined : raw;
    case 'int': {
      if (!/^-?\d+$/.test(raw)) return undefined;
      const n = Number(raw);
      if (!Number.isSafeInteger(n) || (field.min !== undefined && n < field.min)) return undefined;
      return n;
    }
    case 'enum':
      return (field.values as readonly string[]).includes(raw) ? raw : undefined;
  }
}

/** Reads a query string (with or without the leading `?`); unreadable values fall back to defaults. */
export function parseUrlState(search: string): UrlState {
  const params = new URLSearchParams(search);
  const state = defaultUrlState() as unknown as Record<string, unknown>;
  for (const name of NAMES) {
    const field: Field = URL_SCHEMA[name];
    const raw = params.get(field.key);
    if (raw === null) continue;
    const value = readField(field, raw);
    if (value !== undefined) state[name] = value;
  }
  return state as unknown as UrlState;
}

/** Writes the non-default fields as a query string (`?a=1&b=2`, or '' when all are defaults). */
export function serializeUrlState(state: UrlState): string {
  const params = new URLSearchParams();
  for (const name of NAMES) {
    const field: Field = URL_SCHEMA[name];
    const value = state[name];
    if (value === null || value === field.default) continue;
    params.set(field.key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/** True when the query string carries any field of the schema. */
export function hasUrlState(search: string): boolean {
  const params = new URLSearchParams(search);
  return NAMES.some((name) => params.has(URL_SCHEMA[name].key));
}
