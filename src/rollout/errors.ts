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
  return `${where.file}${line}: ${event}`;
}

/** A user-supplied value quoted for a reason: JSON, cut short so the reason stays one readable line. */
export function quote(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
