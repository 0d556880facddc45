// Builds a `text`-form rollout event by event while tracking the live view as spans, one per text
// piece, so importers can say "keep these messages, replace that one" without doing id arithmetic.
// Ids follow docs/rollout-format.md: a piece is its role marker plus its encoded text, each piece
// encoded on its own by the rollout's tokenizer (docs/tokenizers.md), so a span's length is fixed.

import type { AppendRole, EventJson, InsertRole, ViewPieceJson } from '../format';
import { byteTokenizer, type Tokenizer } from '../tokenizer';

/** Number of byte-tokenizer ids a `text` piece creates: its role marker and its UTF-8 bytes. */
export function textPieceLength(text: string): number {
  return byteTokenizer.pieceLength(text, 'obs');
}

/** One text piece in the live view: physical ids first .. first + count - 1. */
export interface Span<T> {
  readonly first: number;
  readonly count: number;
  readonly role: AppendRole | InsertRole;
  /** Created by an edit's insert (never a target). */
  readonly inserted: boolean;
  /** The importer's own label (which record, which tool result). */
  readonly tag: T;
}

export type ViewItem<T> = { keep: Span<T> } | { insert: { role: InsertRole; text: string }; tag: T };

export interface TextRolloutBuilder<T> {
  append(role: AppendRole, text: string, tag: T): Span<T>;
  /**
   * Rewrites the live view to exactly `items` (kept spans in live order, inserted text).
   * Returns false, emitting nothing, when the view would not change (docs/rollout-format.md: that is no edit).
   */
  edit(items: readonly ViewItem<T>[]): boolean;
  /** The live view, in order. */
  readonly live: readonly Span<T>[];
  /** Physical tape length so far. */
  readonly length: number;
  /** Events emitted so far, and how many of them were edits. */
  readonly events: number;
  readonly edits: number;
}

export function createTextRolloutBuilder<T>(emit: (event: EventJson) => void, tokenizer: Tokenizer = byteTokenizer): TextRolloutBuilder<T> {
  let live: Span<T>[] = [];
  let length = 0;
  let events = 0;
  let edits = 0;

  const create = (role: AppendRole | InsertRole, text: string, tag: T, inserted: boolean): Span<T> => {
    const span: Span<T> = { first: length, count: tokenizer.pieceLength(text, role), role, inserted, tag };
    length += span.count;
    return span;
  };

  return {
    append(role, text, tag) {
      const span = create(role, text, tag, false);
      live.push(span);
      emit({ op: 'append', role, text });
      events++;
      return span;
    },
    edit(items) {
      const position = new Map<Span<T>, number>();
      live.forEach((span, i) => position.set(span, i));
      let last = -1;
      let unchanged = items.length === live.length;
      for (const [i, item] of items.entries()) {
        if (!('keep' in item)) {
          unchanged = false;
          continue;
        }
        const at = position.get(item.keep);
        if (at === undefined) throw new Error(`edit keeps a span (ids ${item.keep.first}..) that is not live`);
        if (at <= last) throw new Error(`edit keeps spans out of live order (ids ${item.keep.first}..)`);
        if (at !== i) unchanged = false;
        last = at;
      }
      if (unchanged) return false;

      const view: ViewPieceJson[] = [];
      const next: Span<T>[] = [];
      let open: [number, number] | null = null;
      for (const item of items) {
        if ('keep' in item) {
          const { first, count } = item.keep;
          if (open && open[1] === first) open[1] = first + count;
          else {
            open = [first, first + count];
            view.push({ keep: open });
          }
          next.push(item.keep);
        } else {
          open = null;
          next.push(create(item.insert.role, item.insert.text, item.tag, true));
          view.push({ insert: { role: item.insert.role, text: item.insert.text } });
        }
      }
      live = next;
      emit({ op: 'edit', view });
      events++;
      edits++;
      return true;
    },
    get live() {
      return live;
    },
    get length() {
      return length;
    },
    get events() {
      return events;
    },
    get edits() {
      return edits;
    },
  };
}
