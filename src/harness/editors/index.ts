// Editor specs with their defaults, and the editor built from a spec.

import { createCompactEditor } from './compact';
import { createFoldEditor } from './fold';
import { createNoneEditor } from './none';
import { createStackEditor } from './stack';
import type { Framing } from '../framing';
import { EDITOR_KINDS, type Editor, type EditorKind, type EditorSpec } from './types';
import { createWindowEditor } from './window';

export * from './types';
export { FOLD_PREFIX, FOLD_REFUSED, isFoldAction } from './fold';

/**
 * Defaults sized for the default `lookup` task (prompt about 50 tokens, one turn about 110): each
 * budget-driven editor fires at least once per episode, and the expert's episodes stay solvable.
 */
export const EDITOR_DEFAULTS = {
  none: { kind: 'none' },
  window: { kind: 'window', budget: 200, keepTurns: 1 },
  compact: { kind: 'compact', budget: 240, keepTurns: 1 },
  stack: { kind: 'stack', budget: 200, keepTurns: 1, summarize: true },
  fold: { kind: 'fold', budget: 200, keepTurns: 1 },
} as const satisfies { [K in EditorKind]: Extract<EditorSpec, { kind: K }> };

export interface EditorOverrides {
  budget?: number;
  keepTurns?: number;
  summarize?: boolean;
}

export function isEditorKind(value: unknown): value is EditorKind {
  return typeof value === 'string' && (EDITOR_KINDS as readonly string[]).includes(value);
}

/** A complete, checked spec: the kind's defaults with the given fields replaced. */
export function editorSpec(kind: EditorKind, overrides: EditorOverrides = {}): EditorSpec {
  if (!isEditorKind(kind)) throw new Error(`unknown editor ${JSON.stringify(kind)} (one of ${EDITOR_KINDS.join(', ')})`);
  const spec = { ...EDITOR_DEFAULTS[kind] } as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    if (!(key in spec)) throw new Error(`editor ${kind} has no option ${key}`);
    spec[key] = value;
  }
  return checkEditorSpec(spec as unknown as EditorSpec);
}

export function checkEditorSpec(spec: EditorSpec): EditorSpec {
  if (spec.kind === 'none') return spec;
  if (!Number.isInteger(spec.budget) || spec.budget < 1) throw new Error(`editor ${spec.kind}: budget must be a positive integer, got ${spec.budget}`);
  if (!Number.isInteger(spec.keepTurns) || spec.keepTurns < 0) {
    throw new Error(`editor ${spec.kind}: keepTurns must be a non-negative integer, got ${spec.keepTurns}`);
  }
  if (spec.kind === 'stack' && typeof spec.summarize !== 'boolean') throw new Error('editor stack: summarize must be a boolean');
  return spec;
}

/** The editor's token budget (for fold: the budget the policy is told), null for `none`. */
export function editorBudget(spec: EditorSpec): number | null {
  return spec.kind === 'none' ? null : spec.budget;
}

/** The editor of `spec`; its pieces (summaries, cues) in `framing`'s tokens (default the byte tokenizer's). */
export function createEditor(spec: EditorSpec | EditorKind, framing?: Framing): Editor {
  const s = typeof spec === 'string' ? editorSpec(spec) : checkEditorSpec(spec);
  switch (s.kind) {
    case 'none':
      return createNoneEditor(s);
    case 'window':
      return createWindowEditor(s);
    case 'compact':
      return createCompactEditor(s, framing);
    case 'stack':
      return createStackEditor(s, framing);
    case 'fold':
      return createFoldEditor(s, framing);
  }
}
