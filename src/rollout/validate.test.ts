// One named test per rule of docs/rollout-format.md, each on the smallest rollout that breaks (or shows) it.

import { describe, expect, it } from 'vitest';
import { ValidationError } from './errors';
import { deriveTree } from '../tree/derive';
import { validateRollout } from './validate';
import { ROLE_CODE } from './format';

const base = { format: 'memorywalker.rollout/v1', id: 'r', vocab: 272 };
const prompt = (tokens: number[]) => ({ op: 'append', role: 'prompt', tokens });
const act = (tokens: number[], logprobs?: number[]) => ({ op: 'append', role: 'act', tokens, ...(logprobs ? { logprobs } : {}) });
const edit = (...view: unknown[]) => ({ op: 'edit', view });
const keep = (a: number, b: number) => ({ keep: [a, b] });
const summary = (tokens: number[]) => ({ insert: { role: 'summary', tokens } });

function load(events: unknown[], header: Record<string, unknown> = {}) {
  return validateRollout({ ...base, ...header, events }, { file: 'f.json' });
}

/** The ValidationError a rollout raises (fails the test if it loads or throws anything else). */
function errorOf(events: unknown[], header: Record<string, unknown> = {}): ValidationError {
  try {
    load(events, header);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError, the rollout loaded');
}

describe('§2 physical ids', () => {
  it('gives every created token (append or insert) the next id in creation order', () => {
    const r = load([prompt([5, 6]), act([7]), edit(keep(0, 1), summary([8, 9]), keep(2, 3)), act([10])]);
    expect(Array.from(r.tokens)).toEqual([5, 6, 7, 8, 9, 10]);
    expect(Array.from(r.segments)).toEqual([0, 0, 0, 1, 1, 1]);
    expect(Array.from(r.roles)).toEqual([0, 0, 2, 3, 3, 2]);
    expect(r.events[2]).toEqual({ op: 'edit', edit: 1, view: [{ keep: [0, 1] }, { insert: { role: 'summary', first: 3, count: 2 } }, { keep: [2, 3] }] });
    expect(Array.from(r.targets)).toEqual([2, 5]);
    expect(r.length).toBe(6);
    expect(r.K).toBe(1);
  });
});

describe('§2 token values', () => {
  it('accepts ids in [0, vocab) and rejects the rest', () => {
    expect(load([prompt([0, 299])], { vocab: 300 }).tokens[1]).toBe(299);
    const e = errorOf([prompt([1]), act([300])], { vocab: 300 });
    expect(e.event).toBe(1);
    expect(e.reason).toBe('append: tokens[0] = 300 is not a token id in [0, 300)');
    expect(e.message).toBe('f.json: event 1: append: tokens[0] = 300 is not a token id in [0, 300)');
    expect(errorOf([prompt([1.5])]).reason).toMatch(/tokens\[0\] = 1.5 is not a token id/);
    expect(errorOf([prompt([-1])]).reason).toMatch(/tokens\[0\] = -1 is not a token id/);
    expect(errorOf([prompt(['7' as unknown as number])]).reason).toMatch(/tokens\[0\] = "7"/);
  });

  it('rejects text whose encoding falls outside the vocabulary', () => {
    const e = errorOf([{ op: 'append', role: 'prompt', text: 'hi' }], { vocab: 256 });
    expect(e.reason).toBe('append: text encodes to token 258, outside [0, 256)');
  });
});

describe('§2 byte tokenizer', () => {
  it('encodes a text piece as its role marker then UTF-8 bytes; the marker is never a target', () => {
    const r = load([prompt([1]), { op: 'append', role: 'act', text: 'hé', logprobs: [-0.5, -1, -2, -3] }]);
    expect(Array.from(r.tokens)).toEqual([1, 260, 104, 195, 169]);
    expect(Array.from(r.roles)).toEqual([0, 2, 2, 2, 2]);
    expect(Array.from(r.targets)).toEqual([2, 3, 4]);
    expect(Array.from(r.logprobs)).toEqual([NaN, -0.5, -1, -2, -3]);
  });

  it('marks inserted and observed text with <summary>, <obs>, <prompt>', () => {
    const r = load([
      { op: 'append', role: 'prompt', text: 'a' },
      { op: 'append', role: 'obs', text: 'b' },
      edit(keep(0, 2), { insert: { role: 'summary', text: 'c' } }),
    ]);
    expect(Array.from(r.tokens)).toEqual([258, 97, 259, 98, 261, 99]);
    expect(r.roles[4]).toBe(ROLE_CODE.summary);
  });

  it('lets a text act open a rollout: its marker is the token before the first target', () => {
    const r = load([{ op: 'append', role: 'act', text: 'x' }]);
    expect(Array.from(r.targets)).toEqual([1]);
  });

  it('needs a known tokenizer for text, but not for tokens', () => {
    expect(load([prompt([1])], { tokenizer: 'llama3' }).tokenizer).toBe('llama3');
    expect(errorOf([{ op: 'append', role: 'prompt', text: 'x' }], { tokenizer: 'llama3' }).reason).toBe(
      'append: text needs a known tokenizer; "llama3" is not one',
    );
    expect(load([prompt([1])]).tokenizer).toBe('byte');
  });
});

describe('§2 logprobs', () => {
  it('has exactly one finite number <= 0 per token of its event', () => {
    expect(Array.from(load([prompt([1]), act([2, 3], [-0.25, 0])]).logprobs)).toEqual([NaN, -0.25, 0]);
    expect(errorOf([prompt([1]), act([2, 3], [-1])]).reason).toBe('logprobs has 1 entries for 2 tokens');
    expect(errorOf([prompt([1]), act([2], [0.5])]).reason).toBe('logprobs[0] = 0.5 is not a finite number <= 0');
    expect(errorOf([prompt([1]), act([2], [null as unknown as number])]).reason).toBe('logprobs[0] = null is not a finite number <= 0');
  });

  it('reads as NaN on every id of a rollout that gives none, the same array each time, in copies too', () => {
    const r = load([prompt([1, 2]), act([3])]);
    expect(Array.from(r.logprobs)).toEqual([NaN, NaN, NaN]);
    expect(r.logprobs).toBe(r.logprobs);
    expect(Array.from({ ...r }.logprobs)).toEqual([NaN, NaN, NaN]);
    const given = Float64Array.of(-1, -2, -3);
    r.logprobs = given;
    expect(r.logprobs).toBe(given);
  });

  it('is allowed on act appends only', () => {
    const e = errorOf([{ op: 'append', role: 'obs', tokens: [1], logprobs: [-1] }]);
    expect(e.reason).toBe('logprobs are only allowed on act appends');
  });
});

describe('§2 every target has a token before it', () => {
  it('rejects an act that opens the rollout', () => {
    const e = errorOf([act([1])]);
    expect(e.event).toBe(0);
    expect(e.reason).toBe('target id 0 has no token before it in its live view');
  });

  it('rejects an act right after an edit that emptied the live view', () => {
    const e = errorOf([prompt([1]), act([2]), edit(), act([3])]);
    expect(e.event).toBe(3);
    expect(e.reason).toBe('target id 2 has no token before it in its live view');
  });

  it('counts a target that ends up first in the final walk as dropped, not as an error', () => {
    const tree = deriveTree(load([prompt([1]), act([2, 3]), edit(keep(1, 3))]));
    expect(tree.finalPrefix(1)).toBeNull();
    expect(tree.dropped[1]).toBe(1);
    expect(Array.from(tree.finalPrefix(2)!)).toEqual([1]);
    expect(tree.figures.droppedTargets).toBe(1);
  });
});

describe('§2 keep ranges', () => {
  it('must lie inside the current live view', () => {
    expect(errorOf([prompt([1, 2, 3]), edit(keep(0, 4))]).reason).toBe('keep [0, 4]: id 3 is not live');
    const evicted = errorOf([prompt([1, 2, 3]), edit(keep(0, 1)), edit(keep(0, 2))]);
    expect(evicted.event).toBe(2);
    expect(evicted.reason).toBe('keep [0, 2]: id 1 is not live');
  });

  it('must follow increasing live order', () => {
    const e = errorOf([prompt([1, 2, 3]), edit(keep(2, 3), keep(0, 1))]);
    expect(e.reason).toBe('keep [0, 1]: id 0 comes before an id kept earlier (keeps must follow live order)');
    // ids 2, 3 sit after the summary 4 in live order 0 1 4 2 3: keeping 4 after them is out of order
    const moved = errorOf([prompt([1, 2, 3, 4]), edit(keep(0, 2), summary([9]), keep(2, 4)), edit(keep(2, 4), keep(4, 5))]);
    expect(moved.reason).toBe('keep [4, 5]: id 4 comes before an id kept earlier (keeps must follow live order)');
  });

  it('may not repeat an id', () => {
    expect(errorOf([prompt([1, 2, 3]), edit(keep(0, 2), keep(1, 3))]).reason).toBe('keep [1, 3]: id 1 is kept twice');
  });

  it('may span ids that are not adjacent in the live view, as long as their order is increasing', () => {
    // live 0 1 | 3 | 2 after inserting 3 between 1 and 2; keep [0, 3] = 0 1 2 evicts the summary
    const r = load([prompt([1, 2, 3]), edit(keep(0, 2), summary([9]), keep(2, 3)), edit(keep(0, 3))]);
    expect(Array.from(deriveTree(r).finalWalk)).toEqual([0, 1, 2]);
  });

  it('must be [a, b] with integers 0 <= a < b', () => {
    expect(errorOf([prompt([1]), edit(keep(1, 1))]).reason).toBe('view[0]: keep [1, 1] is empty (needs a < b)');
    expect(errorOf([prompt([1]), edit({ keep: [0] })]).reason).toBe('view[0]: keep must be [a, b] with integers 0 <= a < b, got [0]');
    expect(errorOf([prompt([1]), edit({ keep: [-1, 1] })]).reason).toMatch(/keep must be \[a, b\]/);
  });
});

describe('§2 an edit must change the live view', () => {
  it('rejects an edit whose new view equals the current one', () => {
    const e = errorOf([prompt([1, 2]), edit(keep(0, 1), keep(1, 2))]);
    expect(e.event).toBe(1);
    expect(e.reason).toBe('edit leaves the live view unchanged (an edit must evict or insert)');
    expect(errorOf([edit()]).reason).toMatch(/unchanged/);
  });

  it('accepts an edit that only inserts, or only evicts', () => {
    expect(load([prompt([1]), edit(keep(0, 1), summary([2]))]).K).toBe(1);
    expect(load([prompt([1, 2]), edit(keep(1, 2))]).K).toBe(1);
  });
});

describe('§2 insert roles', () => {
  it('may not insert act tokens', () => {
    expect(errorOf([prompt([1]), edit(keep(0, 1), { insert: { role: 'act', tokens: [2] } })]).reason).toBe(
      'view[1]: insert may not have role "act" (inserted tokens are never targets)',
    );
  });

  it('accepts summary, obs and prompt inserts and never makes them targets', () => {
    const r = load([prompt([1]), edit(keep(0, 1), { insert: { role: 'obs', tokens: [2] } }, { insert: { role: 'prompt', tokens: [3] } })]);
    expect(r.targets).toHaveLength(0);
    expect(errorOf([prompt([1]), edit({ insert: { role: 'tool', tokens: [2] } })]).reason).toMatch(/insert role must be/);
  });
});

describe('§2 unknown fields', () => {
  it('keeps and ignores unknown top-level fields', () => {
    const r = load([prompt([1])], { harness: { name: 'h' }, step: 3, reward: 0.5, group: 'g', meta: { note: 'n' } });
    expect(r.extra).toEqual({ harness: { name: 'h' }, step: 3 });
    expect(r.reward).toBe(0.5);
    expect(r.group).toBe('g');
    expect(r.meta).toEqual({ note: 'n' });
  });

  it('rejects an unknown op', () => {
    const e = errorOf([prompt([1]), { op: 'delete' }]);
    expect(e.event).toBe(1);
    expect(e.reason).toBe('unknown op "delete"');
    expect(errorOf([{ role: 'prompt', tokens: [1] }]).reason).toBe('event has no op');
  });

  it('rejects unknown event, piece and insert fields', () => {
    expect(errorOf([{ ...prompt([1]), weight: 2 }]).reason).toBe('unknown field "weight" in append event');
    expect(errorOf([prompt([1]), { ...edit(keep(0, 1)), reason: 'x' }]).reason).toBe('unknown field "reason" in edit event');
    expect(errorOf([prompt([1]), edit({ keep: [0, 1], note: 1 })]).reason).toBe('unknown field "note" in view[0]');
    expect(errorOf([prompt([1]), edit({ insert: { role: 'summary', tokens: [1], by: 'x' } })]).reason).toBe('unknown field "by" in view[0].insert');
  });
});

describe('§2 header', () => {
  it('checks format, id, vocab, reward, group, tokenizer and events', () => {
    expect(errorOf([], { format: 'v0' }).reason).toBe('format must be "memorywalker.rollout/v1", got "v0"');
    expect(errorOf([], { id: '' }).reason).toBe('id must be a non-empty string, got ""');
    expect(errorOf([], { vocab: 0 }).reason).toMatch(/^vocab must be an integer/);
    expect(errorOf([], { reward: 'high' }).reason).toBe('reward must be a number, got "high"');
    expect(errorOf([], { group: 1 }).reason).toBe('group must be a string, got 1');
    expect(errorOf([], { tokenizer: 5 }).reason).toBe('tokenizer must be a string, got 5');
    expect(() => validateRollout({ ...base }, { file: 'f.json', line: 3 })).toThrow('f.json:3: events must be an array, got undefined');
    expect(errorOf([], { vocab: 0 }).event).toBeUndefined();
  });

  it('needs exactly one of tokens or text, and non-empty tokens', () => {
    expect(errorOf([{ op: 'append', role: 'prompt' }]).reason).toBe('append needs exactly one of "tokens" or "text"');
    expect(errorOf([{ op: 'append', role: 'prompt', tokens: [1], text: 'a' }]).reason).toBe('append needs exactly one of "tokens" or "text"');
    expect(errorOf([prompt([])]).reason).toBe('append: tokens is empty');
    expect(errorOf([{ op: 'append', role: 'summary', tokens: [1] }]).reason).toMatch(/append role must be/);
  });
});
