// The one error a rollout file can raise: where (file, JSONL line, event index) and a one-line
// reason. Its message is exactly the CLI's stderr line, `FILE[:LINE]: event N: reason`.

export interface SourceLocation {
  file: string;
  /** 1-based line, for JSONL files only. */
  line?: number;
}

export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  readonly file: string;
  readonly line?: number;
  /** 0-based index into the rollout's `events`, when one event is at fault. */
  readonly event?: number;
  readonly reason: string;

  constructor(where: SourceLocation & { event?: number }, reason: string) {
    const oneLine = reason.replace(/\s*[\r\n]+\s*/g, ' ');
    super(formatLocation(where) + oneLine);
    this.file = where.file;
    if (where.line !== undefined) this.line = where.line;
    if (where.event !== undefined) this.event = where.event;
    this.reason = oneLine;
  }
}

export function isValidationError(error: unknown): error is ValidationError {
  return error instanceof ValidationError;
}

function formatLocation(where: SourceLocation & { event?: number }): string {
  const line = where.line === undefined ? '' : `:${where.line}`;
  const event = where.event === undefined ? '' : `event ${where.event}: `;
  return `${escapeControls(where.file)}${line}: ${event}`;
}

/**
 * A file name (or any user text) with its control characters escaped as in JSON (`\n`, `\u001b`),
 * so a name holding a newline still makes a one-line message.
 */
export function escapeControls(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => {
    const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
    return named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

const QUOTE_CHARS = 40;

/**
 * A user-supplied value quoted for a reason: JSON, cut short so the reason stays one readable line.
 * The preview stops once it has enough characters, so its work (and recursion depth) is bounded by
 * that length whatever the value holds: a value nested 100,000 deep, or a 100 MB string.
 */
export function quote(value: unknown): string {
  const text = preview(value, QUOTE_CHARS + 1);
  return text.length > QUOTE_CHARS ? `${text.slice(0, QUOTE_CHARS - 3)}...` : text;
}

/** JSON text of `value`, at most about `budget` characters (each nesting level costs at least one). */
function preview(value: unknown, budget: number): string {
  if (budget <= 0) return '';
  if (typeof value === 'string') return JSON.stringify(value.length > budget ? value.slice(0, budget) : value).slice(0, value.length > budget ? -1 : undefined);
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : String(value);
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value !== 'object') return String(value);
  const array = Array.isArray(value);
  let out = array ? '[' : '{';
  const keys = array ? null : Object.keys(value);
  const count = array ? (value as unknown[]).length : keys!.length;
  for (let i = 0; i < count && out.length < budget; i++) {
    if (i > 0) out += ',';
    if (keys) out += `${JSON.stringify(keys[i].slice(0, budget))}:`;
    const item = array ? (value as unknown[])[i] : (value as Record<string, unknown>)[keys![i]];
    out += preview(item, budget - out.length);
  }
  return out.length < budget ? out + (array ? ']' : '}') : out;
}
