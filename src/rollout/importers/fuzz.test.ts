// The newer importers under mutated input (one test per family): each fixture cut, flipped, and with
// values of the wrong type put anywhere in its records, read through the core's own path (detection,
// import, validation). Every outcome is a loaded file or one ValidationError with a one-line
// `FILE[:LINE]: reason` message; nothing else (a TypeError, a stack overflow) may escape.

import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors';
import { createRng, type Rng } from '../generate-random';
import { readRolloutFile } from '../parse';
import { readFixture } from './testing';

const ODD: unknown[] = [null, -1, 0, 1.5, 'x', '', [], {}, true, [0, 1], { type: 'message' }, 'user', 'gemini', 'condensation', 1e300];

function mangleText(text: string, rng: Rng): string {
  switch (rng.int(0, 2)) {
    case 0:
      return text.slice(0, rng.int(1, text.length));
    case 1: {
      const i = rng.int(0, text.length - 1);
      return text.slice(0, i) + '{}[],:"0a\n'[rng.int(0, 9)] + text.slice(i + 1);
    }
    default: {
      const i = rng.int(0, text.length - 1);
      return text.slice(0, i) + text.slice(i + rng.int(1, 40));
    }
  }
}

/** Replaces one value somewhere inside `root` (or deletes it) by an odd one, in place. */
function mutateValue(root: unknown, rng: Rng): void {
  let node = root;
  for (let depth = 0; depth < 8; depth++) {
    const keys = Array.isArray(node) ? node.map((_, i) => i) : typeof node === 'object' && node !== null ? Object.keys(node) : [];
    if (keys.length === 0) return;
    const key = keys[rng.int(0, keys.length - 1)] as never;
    const child = (node as Record<string, unknown>)[key];
    if (typeof child !== 'object' || child === null || rng.chance(0.3)) {
      if (rng.chance(0.2) && !Array.isArray(node)) delete (node as Record<string, unknown>)[key];
      else (node as Record<string, unknown>)[key] = structuredClone(ODD[rng.int(0, ODD.length - 1)]);
      return;
    }
    node = child;
  }
}

function mutate(text: string, name: string, rng: Rng): string {
  if (rng.chance(0.4)) return mangleText(text, rng);
  if (name.endsWith('.jsonl')) {
    const lines = text.split('\n').filter((l) => l.trim());
    const i = rng.int(0, lines.length - 1);
    const record = JSON.parse(lines[i]);
    mutateValue(record, rng);
    lines[i] = JSON.stringify(record);
    if (rng.chance(0.2)) lines.splice(rng.int(0, lines.length - 1), 0, lines[rng.int(0, lines.length - 1)]);
    return lines.join('\n') + '\n';
  }
  const doc = JSON.parse(text);
  for (let m = rng.int(1, 3); m > 0; m--) mutateValue(doc, rng);
  return JSON.stringify(doc, null, rng.chance(0.5) ? 2 : undefined);
}

function fuzz(name: string, runs: number) {
  const text = readFixture(name);
  const file = `f.${name.split('.').pop()}`;
  let loaded = 0;
  let refused = 0;
  for (let seed = 0; seed < runs; seed++) {
    const rng = createRng(0x9e3779b1 ^ (seed * 7919) ^ name.length);
    const input = mutate(text, name, rng);
    try {
      readRolloutFile(input, file);
      loaded++;
    } catch (error) {
      if (!(error instanceof ValidationError)) throw new Error(`${name} seed ${seed}: ${error instanceof Error ? error.stack : String(error)}`);
      expect(error.message).toMatch(/^f\.jsonl?(:\d+)?: [^\n]+$/);
      refused++;
    }
  }
  // Both outcomes occur: the mutations reach past the parser into the importer.
  expect(loaded).toBeGreaterThan(0);
  expect(refused).toBeGreaterThan(0);
}

describe('newer importers under mutated input: loaded, or one ValidationError', () => {
  it('codex', () => fuzz('codex-rollout-compacted.jsonl', 150));
  it('gemini (JSON file)', () => fuzz('gemini-session.json', 150));
  it('gemini (JSONL recording)', () => fuzz('gemini-session.jsonl', 150));
  it('openhands', () => fuzz('openhands-condensation.json', 150));
  it('verl', () => fuzz('verl-rollout-data-12.jsonl', 150));
  it('SkyRL columns', () => fuzz('skyrl-generator-output.json', 150));
});
