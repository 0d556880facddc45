// Test helpers for importers: fixtures by name, byte sources cut into awkward chunks, and edit
// views described by what they keep (event labels) instead of raw physical ids.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RolloutJson } from '../format';
import type { Rollout } from '../rollout';
import { validateRollout } from '../validate';
import type { OpenSource } from './lines';

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

export function readFixture(name: string): string {
  return readFileSync(fixturePath(name), 'utf8');
}

/** The text's UTF-8 bytes in chunks of `size` bytes (cutting characters and CRLFs apart). */
export function chunkedSource(text: string, size: number): OpenSource {
  const bytes = new TextEncoder().encode(text);
  return function* () {
    for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size);
  };
}

/** Records as JSONL text. */
export function jsonl(records: readonly unknown[]): string {
  return records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
}

/**
 * Each edit's view as labels: 'e3' keeps all of append event 3, 'e16.0' keeps insert 0 of edit
 * event 16, { insert: role, text } is a new insert. Appends are described as [role, text].
 * Keep ranges must cover whole pieces (importers never keep part of a message).
 */
export function describeRollout(json: RolloutJson): { rollout: Rollout; events: unknown[] } {
  const rollout = validateRollout(json, { file: 'test' });
  const pieces: { first: number; count: number; label: string }[] = [];
  const events = rollout.events.map((event, i) => {
    if (event.op === 'append') {
      pieces.push({ first: event.first, count: event.count, label: `e${i}` });
      return [event.role, event.text];
    }
    const view: unknown[] = [];
    let inserted = 0;
    for (const piece of event.view) {
      if ('insert' in piece) {
        view.push({ insert: piece.insert.role, text: piece.insert.text });
        continue;
      }
      let [a] = piece.keep;
      const b = piece.keep[1];
      while (a < b) {
        const p = pieces.find((x) => x.first === a);
        if (!p || p.first + p.count > b) throw new Error(`keep [${piece.keep}] does not cover whole pieces at id ${a}`);
        view.push(p.label);
        a += p.count;
      }
    }
    for (const piece of event.view) {
      if ('insert' in piece) pieces.push({ first: piece.insert.first, count: piece.insert.count, label: `e${i}.${inserted++}` });
    }
    return { edit: view };
  });
  return { rollout, events };
}
