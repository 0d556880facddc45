// The one mechanism behind every state a link carries (after TensorFlow Playground's state.ts): a
// schema declares per field its query key, its type with the values allowed, and help. Reading
// ignores unknown keys and values it cannot read; writing leaves out what equals its default.

export type Field = { key: string; help: string } & (
  | { type: 'string' }
  /** A whole number (digits only) in [min, max]. */
  | { type: 'int'; min: number; max?: number }
  | { type: 'float'; min: number; max: number }
  | { type: 'enum'; values: readonly string[] }
  /** Some of `values`, comma-separated; read and written in the order of `values`. */
  | { type: 'subset'; values: readonly string[] }
);

export type Schema<T> = { readonly [K in keyof T]: Field };

type Value = string | number | readonly string[] | null;

/** The value a raw query value names, or undefined when the field cannot read it. */
function readField(field: Field, raw: string): Value | undefined {
  switch (field.type) {
    case 'string':
      return raw === '' ? undefined : raw;
    case 'int': {
      if (!/^\d+$/.test(raw)) return undefined;
      const n = Number(raw);
      return Number.isSafeInteger(n) && n >= field.min && n <= (field.max ?? Infinity) ? n : undefined;
    }
    case 'float': {
      const n = Number(raw);
      return raw !== '' && Number.isFinite(n) && n >= field.min && n <= field.max ? n : undefined;
    }
    case 'enum':
      return field.values.includes(raw) ? raw : undefined;
    case 'subset': {
      const named = raw.split(',');
      const subset = field.values.filter((v) => named.includes(v));
      return subset.length ? subset : undefined;
    }
  }
}

function writeField(field: Field, value: Value): string {
  if (field.type === 'subset') return field.values.filter((v) => (value as readonly string[]).includes(v)).join(',');
  return String(value);
}

function namesOf<T>(schema: Schema<T>): (keyof T)[] {
  return Object.keys(schema) as (keyof T)[];
}

/** `base` with every field of `params` that the schema can read. */
export function readFields<T>(schema: Schema<T>, params: URLSearchParams, base: T): T {
  const state = { ...base } as Record<keyof T, Value>;
  for (const name of namesOf(schema)) {
    const raw = params.get(schema[name].key);
    const value = raw === null ? undefined : readField(schema[name], raw);
    if (value !== undefined) state[name] = value;
  }
  return state as T;
}

/** The fields of `state` that differ from `defaults`, or are named in `always`, in schema order; null is never written. */
export function writeFields<T>(schema: Schema<T>, state: T, defaults: T, always: readonly (keyof T)[] = []): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of namesOf(schema)) {
    const field = schema[name];
    const value = state[name] as Value;
    if (value === null) continue;
    const text = writeField(field, value);
    const fallback = defaults[name] as Value;
    if (!always.includes(name) && fallback !== null && text === writeField(field, fallback)) continue;
    params.set(field.key, text);
  }
  return params;
}

/** True when `params` carries any field of the schema. */
export function hasFields<T>(schema: Schema<T>, params: URLSearchParams): boolean {
  return namesOf(schema).some((name) => params.has(schema[name].key));
}
