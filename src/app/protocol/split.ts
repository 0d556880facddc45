// A large value posted as several messages, one per named part, so that the page takes it in over
// several tasks: structured clone deserializes a message whole in the task that receives it, and
// the view data of a million-node tree (tens of thousands of objects and typed arrays) would hold
// the page's main thread for all of it at once. Each part carries the typed arrays it reaches first
// (their buffers transferred, never copied) and the objects it reaches first; what an earlier part
// already carried is cut out and named by a link, so every array is sent once and an object shared
// between parts (the rollout the view and the tree both hold) is one object again on the page.

/** One message's worth: a part's value with its links, and the typed arrays it carries. */
export interface SplitPart {
  key: string;
  /** The part's value, each typed array and each object of an earlier part replaced by null. */
  value: unknown;
  /** The typed arrays this part carries, in the order of their global indices (after those of earlier parts). */
  arrays: ArrayBufferView[];
  /**
   * What goes where the nulls are, one line each: `a INDEX PATH` (typed array INDEX of all parts so
   * far) or `o FROM PATH` (the object at FROM, a path in an earlier part); a path is the part's key
   * then its property names, joined by "/".
   */
  links: string;
}

const SEP = '/';
/** Property names written into a path as they are; others (a rollout's `extra` may name anything) are URI-encoded. */
const PLAIN = /^[\w.-]*$/;

/** Splits `entries` into parts (in their order) and the buffers each part's message transfers. */
export function splitParts(entries: [string, unknown][]): { part: SplitPart; transfer: ArrayBuffer[] }[] {
  const arrayIndex = new Map<ArrayBufferView, number>();
  const buffers = new Set<ArrayBufferLike>();
  const objectPath = new Map<object, { part: number; path: string; copy: unknown }>();
  return entries.map(([key, root], part) => {
    const arrays: ArrayBufferView[] = [];
    const transfer: ArrayBuffer[] = [];
    const links: string[] = [];
    // A copy of `value` with the cuts made (the worker's own objects are left as they are).
    const cut = (value: unknown, path: string): unknown => {
      if (value === null || typeof value !== 'object') return value;
      if (!ArrayBuffer.isView(value) && !Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype) {
        throw new Error(`splitParts: ${path} is a ${value.constructor?.name ?? 'non-plain object'}, not plain data`);
      }
      if (ArrayBuffer.isView(value)) {
        let index = arrayIndex.get(value);
        if (index === undefined) {
          // A buffer is transferred once; a second view of one already sent travels as a copy.
          const sent = buffers.has(value.buffer) || !(value.buffer instanceof ArrayBuffer) ? copyOf(value) : value;
          buffers.add(sent.buffer);
          index = arrayIndex.size;
          arrayIndex.set(value, index);
          arrays.push(sent);
          transfer.push(sent.buffer as ArrayBuffer);
        }
        links.push(`a ${index} ${path}`);
        return null;
      }
      const first = objectPath.get(value);
      // Within a part, structured clone keeps one object one object: its copy is reused.
      if (first?.part === part) return first.copy;
      if (first) {
        links.push(`o ${first.path} ${path}`);
        return null;
      }
      const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? new Array<unknown>(value.length) : {};
      objectPath.set(value, { part, path, copy });
      for (const [name, item] of Object.entries(value)) {
        (copy as Record<string, unknown>)[name] = cut(item, `${path}${SEP}${PLAIN.test(name) ? name : encodeURIComponent(name)}`);
      }
      return copy;
    };
    const value = cut(root, key);
    return { part: { key, value, arrays, links: links.join('\n') }, transfer };
  });
}

function copyOf(view: ArrayBufferView): ArrayBufferView {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
  const Ctor = view.constructor as new (buffer: ArrayBuffer, offset: number, length: number) => ArrayBufferView;
  const perItem = 'BYTES_PER_ELEMENT' in view ? (view as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT : 1;
  return new Ctor(bytes.buffer, 0, view.byteLength / perItem);
}

/** The page's side: parts taken in one message at a time, joined into the values of splitParts' entries. */
export interface PartsJoiner {
  /** Puts a part's arrays and links back (one part's work; the parts arrive in order). */
  add(part: SplitPart): void;
  /** The values by key, every link resolved. */
  values(): Record<string, unknown>;
}

const nameOf = (segment: string) => (segment.includes('%') ? decodeURIComponent(segment) : segment);

export function createJoiner(): PartsJoiner {
  const arrays: ArrayBufferView[] = [];
  const roots: Record<string, unknown> = {};
  const at = (path: string): unknown => {
    const names = path.split(SEP);
    let value: unknown = roots[names[0]];
    for (let i = 1; i < names.length; i++) value = (value as Record<string, unknown>)[nameOf(names[i])];
    return value;
  };
  const place = (path: string, item: unknown) => {
    const cut = path.lastIndexOf(SEP);
    if (cut < 0) roots[path] = item;
    else (at(path.slice(0, cut)) as Record<string, unknown>)[nameOf(path.slice(cut + 1))] = item;
  };
  return {
    add(part) {
      roots[part.key] = part.value;
      for (const array of part.arrays) arrays.push(array);
      if (!part.links) return;
      for (const line of part.links.split('\n')) {
        const [kind, from, path] = line.split(' ');
        place(path, kind === 'a' ? arrays[Number(from)] : at(from));
      }
    },
    values: () => roots,
  };
}
