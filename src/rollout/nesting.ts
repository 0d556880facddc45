// How deep a JSON value nests, measured without recursion. JSON.parse reads any depth, but
// JSON.stringify, structuredClone and postMessage recurse and overflow the stack near 8,000
// levels: a value kept for re-serialisation (meta, unknown fields, tool inputs) is bounded here.

/** The deepest nesting a kept value may have (objects and arrays inside one another). */
export const MAX_NESTING = 100;

/** Whether `value` holds objects or arrays nested more than `max` levels deep. */
export function nestsDeeperThan(value: unknown, max = MAX_NESTING): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(node) ? node : Object.values(node as object);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
