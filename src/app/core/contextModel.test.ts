// The context panes' model on the worked example (docs/tree.md) and on the agent-CLI session with
// two compactions: messages (one per append event or inserted piece), replays aligned with the
// live prefix by id, pane token counts equal to `mw tree --per-target`'s prefixes, rows, copy text.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTokenizers, parseRolloutFile, validateRollout } from '../../rollout';
import { perTargetReport } from '../../tree';
import {
  alignPrefix,
  buildPane,
  glyphColumns,
  glyphIds,
  idRunsText,
  lineOfId,
  messagesOf,
  nextDifferenceRow,
  paneLines,
  paneText,
  rowOfId,
  targetLabel,
  tokenDescription,
  type ContextPane,
} from './contextModel';
import { findMatches, matchAt } from './contextFind';
import { GLYPH, type GlyphKind } from './contextText';
import { PREFIX_STATE } from './prefixStates';
import { buildViewData } from './viewData';

const { shared: S, stale: T, future: F, missing: M } = PREFIX_STATE;
const worked = buildViewData(
  parseRolloutFile(readFileSync(new URL('../../../public/examples/worked-example.json', import.meta.url), 'utf8'), 'worked-example.json')[0],
);
const SESSION_FILE = 'agent-session-two-compactions.jsonl';
const session = buildViewData(
  parseRolloutFile(readFileSync(new URL(`../../rollout/importers/fixtures/${SESSION_FILE}`, import.meta.url), 'utf8'), SESSION_FILE)[0],
);

/** The pane's text (glyphs as shown), and the text of its glyphs in one state. */
const text = (pane: ContextPane, state?: number) =>
  pane.glyphs
    .filter((_, g) => state === undefined || pane.glyphState[g] === state)
    .map((g) => g.raw)
    .join('');

describe('messages', () => {
  it('are the append events and inserted pieces of the worked example, with the edit that evicted each id', () => {
    const m = messagesOf(worked);
    expect(m.list.map((x) => [x.role, x.first, x.count, x.edit])).toEqual([
      ['prompt', 0, 2, 0],
      ['act', 2, 2, 0],
      ['obs', 4, 3, 0],
      ['act', 7, 2, 0],
      ['summary', 9, 2, 1],
      ['obs', 11, 2, 0],
      ['act', 13, 2, 0],
      ['act', 15, 2, 0],
    ]);
    expect(Array.from(m.of)).toEqual([0, 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
    expect(Array.from(m.evictedBy)).toEqual([0, 0, 1, 1, 1, 1, 1, 2, 2, 0, 0, 2, 2, 0, 0, 0, 0]);
  });

  it('count 24 in the agent session: 21 appends and 3 inserted pieces (two summaries, one cleared tool result)', () => {
    const m = messagesOf(session);
    expect(m.list).toHaveLength(24);
    expect(m.list.filter((x) => x.edit).map((x) => [x.role, x.edit, x.first, x.count])).toEqual([
      ['summary', 1, 621, 236],
      ['summary', 2, 1140, 203],
      ['obs', 3, 1623, 34],
    ]);
  });
});

describe('a replay aligned with the live prefix by id', () => {
  it('Naive-Compressed at target 13: the final prefix, then the 4 live ids it lacks, missing after summary 9, 10', () => {
    const a = alignPrefix(worked.tree.livePrefix(13), worked.tree.finalPrefix(13)!, 13, 17);
    expect(Array.from(a.ids)).toEqual([0, 1, 9, 10, 7, 8, 11, 12]);
    expect(Array.from(a.state)).toEqual([S, S, S, S, M, M, M, M]);
    expect([a.shown, a.missing, a.stale, a.future]).toEqual([4, 4, 0, 0]);
  });

  it('Naive-Full at target 13: the tape 0..12 in id order, 2..6 stale (evicted by edit 1), nothing missing', () => {
    const a = alignPrefix(worked.tree.livePrefix(13), worked.tree.fullPrefix(13), 13, 17);
    expect(Array.from(a.ids)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect(Array.from(a.state)).toEqual([S, S, T, T, T, T, T, S, S, S, S, S, S]);
    expect([a.shown, a.missing, a.stale, a.future]).toEqual([13, 0, 5, 0]);
  });

  it('places missing ids with no shown live id before them at the start, and marks ids after the target as future', () => {
    const a = alignPrefix([0, 1, 2, 3], [2, 9, 3], 5, 10);
    expect(Array.from(a.ids)).toEqual([0, 1, 2, 9, 3]);
    expect(Array.from(a.state)).toEqual([M, M, S, F, S]);
    expect([a.shown, a.missing, a.stale, a.future]).toEqual([3, 2, 0, 1]);
  });
});

describe('panes', () => {
  it('count the tokens of `mw tree --per-target`: live and final prefix lengths, and the full prefix = the id', () => {
    for (const view of [worked, session]) {
      for (const r of perTargetReport(view.tree)) {
        expect(buildPane(view, 'live', r.id).tokens).toBe(r.livePrefix.length);
        const nc = buildPane(view, 'naive-compressed', r.id);
        expect(nc.scored ? nc.tokens : null).toBe(r.finalPrefix ? r.finalPrefix.length : null);
        expect(buildPane(view, 'naive-full', r.id).tokens).toBe(r.id);
      }
    }
  });

  it('cut the worked example at target 13 into blocks per message, in live order', () => {
    const live = buildPane(worked, 'live', 13);
    expect(live.blocks.map((b) => [messagesOf(worked).list[b.message].role, b.e0, b.e1])).toEqual([
      ['prompt', 0, 2],
      ['summary', 2, 4],
      ['act', 4, 6],
      ['obs', 6, 8],
    ]);
    const nc = buildPane(worked, 'naive-compressed', 13);
    expect(nc.blocks.map((b) => b.state)).toEqual([S, S, M, M]);
    // Rows: each block's heading, then its text; the target closes the pane. The prompt's ids are
    // "\n" and "\x0b": a line break after the newline.
    expect(nc.rows.map((r) => r.kind)).toEqual(['head', 'line', 'line', 'head', 'line', 'head', 'line', 'head', 'line', 'target']);
    expect(rowOfId(nc, 11)).toBe(8);
  });

  it('show a dropped target as not scored by Naive-Compressed: every live id missing, 0 tokens', () => {
    const nc = buildPane(worked, 'naive-compressed', 7);
    expect(nc.scored).toBe(false);
    expect([nc.tokens, nc.missing]).toEqual([0, 7]);
  });

  it('read the agent session at its first diverging leaf: the tool result the policy saw is missing from the final walk', () => {
    const t = session.tree.divergingLeaves[0];
    expect(t).toBe(1587);
    const live = buildPane(session, 'live', t);
    const nc = buildPane(session, 'naive-compressed', t);
    const full = buildPane(session, 'naive-full', t);
    const sentence = 'Tests: 2 passed, 2 total';
    expect(text(live)).toContain(sentence);
    expect(text(nc, M)).toContain(sentence);
    expect(text(nc, S)).not.toContain(sentence);
    // 97 ids missing (its eviction mass), and the 34 ids of edit 3's "[Old tool result content cleared]" written after it.
    expect([live.tokens, nc.tokens, nc.missing, nc.future, full.tokens, full.stale]).toEqual([447, 384, 97, 34, 1587, 1140]);
    expect(session.tree.evictionMass[t]).toBe(97);
    expect(text(nc, F)).toBe('[Old tool result content cleared]');
    // "next difference" finds the missing tool result's heading first.
    const r = nextDifferenceRow(nc, 0);
    expect(nc.rows[r].kind).toBe('head');
    expect(nc.blocks[nc.rows[r].block].state).toBe(M);
  });

  it('cut rows into lines of the pane width: every glyph once, in order, none past the width, a find match kept whole', () => {
    const pane = buildPane(session, 'live', 1587);
    const cols = (g: number) => glyphColumns(pane.glyphs[g]);
    const { lines, firstLine } = paneLines(pane, 40, cols);
    let g = 0;
    lines.forEach((l, i) => {
      const r = pane.rows[l.row];
      if (l.kind === 'line') {
        expect(l.g0).toBe(g);
        let used = 0;
        for (let k = l.g0; k < l.g1; k++) used += cols(k);
        if (l.g1 - l.g0 > 1) expect(used).toBeLessThanOrEqual(40);
        g = l.g1;
      } else expect([l.g0, l.g1, l.kind]).toEqual([r.g0, r.g1, r.kind]);
      if (i === firstLine[l.row]) expect(l.g0).toBe(r.g0);
    });
    expect(g).toBe(pane.glyphs.length);
    // Long rows become several lines; short ones stay one.
    expect(lines.length).toBeGreaterThan(pane.rows.length);
    // The evicted sentence: 24 columns, found once; with the match joined its 24 glyphs share one line.
    const matches = findMatches(session, 'Tests: 2 passed, 2 total');
    expect(matches.count).toBe(1);
    const joined = (k: number) => {
      const m = matchAt(matches, glyphIds(pane, k).first);
      return m >= 0 && m === matchAt(matches, glyphIds(pane, k - 1).first);
    };
    const kept = paneLines(pane, 40, cols, joined);
    const at = lineOfId(pane, kept, matches.ranges[0]);
    const line = kept.lines[at];
    const shown = pane.glyphs
      .slice(line.g0, line.g1)
      .map((x) => x.shown)
      .join('');
    expect(shown).toContain('Tests: 2 passed, 2 total');
    // Wide characters and special-token chips take more columns than their length.
    const glyph = (shown: string, kind: GlyphKind = GLYPH.text) => ({ shown, raw: shown, kind, first: 0, end: 1, breaks: false });
    expect([glyphColumns(glyph('a')), glyphColumns(glyph('漢')), glyphColumns(glyph('😀')), glyphColumns(glyph('<act>', GLYPH.special))]).toEqual([1, 2, 2, 7]);
  });

  it('a line never starts inside a word piece: GPT-2 tokens of several glyphs (" in") stay on one line', async () => {
    await loadTokenizers(['gpt2']);
    const words = buildViewData(
      validateRollout(JSON.parse(readFileSync(new URL('../../../public/examples/worked-words.json', import.meta.url), 'utf8')), { file: 'worked-words.json' }),
    );
    const targets = words.rollout.targets;
    const pane = buildPane(words, 'live', targets[targets.length - 1]);
    const cols = (g: number) => glyphColumns(pane.glyphs[g]);
    const inToken = (g: number) => g > 0 && pane.glyphEntry[g] < pane.glyphEnd[g - 1];
    let pieces = 0;
    for (let g = 1; g < pane.glyphs.length; g++) if (inToken(g) && pane.glyphs[g - 1].raw === ' ') pieces++;
    // The pane has word pieces that start with a space, the case a cut after a space would split.
    expect(pieces).toBeGreaterThan(5);
    // The widest token (its glyphs' columns): a line at least that wide always has a free cut.
    let widest = 0;
    for (let g = 0, run = 0; g < pane.glyphs.length; g++) {
      run = inToken(g) ? run + cols(g) : cols(g);
      widest = Math.max(widest, run);
    }
    let cuts = 0;
    for (const width of [widest, widest + 2, widest + 5]) {
      const { lines } = paneLines(pane, width, cols);
      const cut = lines.filter((l, i) => l.kind === 'line' && i > 0 && lines[i - 1].row === l.row);
      cuts += cut.length;
      expect(cut.filter((l) => inToken(l.g0)).map((l) => `${width}: ${pane.glyphs[l.g0].raw}`)).toEqual([]);
    }
    expect(cuts).toBeGreaterThan(3);
  });

  it('copy as text: headings per block, the diff in wdiff marks', () => {
    expect(paneText(worked, buildPane(worked, 'naive-compressed', 13), 'Naive-Compressed')).toBe(
      [
        '# Naive-Compressed: 4 tokens before target 13',
        '',
        '## prompt · ids 0–1',
        '\n\\x0b',
        '',
        '## summary · inserted by edit 1 · ids 9–10',
        '()',
        '',
        '## action · policy output · ids 7–8 · missing: the policy saw it; evicted by edit 2',
        '[-\\x16\\x17-]',
        '',
        '## observation · ids 11–12 · missing: the policy saw it; evicted by edit 2',
        '[-!"-]',
        '',
      ].join('\n'),
    );
  });

  it('decodes a character split over two byte tokens whole, even across a gap an edit left in a message', () => {
    // "café" (c a f c3 a9): the edit keeps [0, 5) — the marker and "caf" plus the lead byte — and drops the rest of the message.
    const r = validateRollout(
      {
        format: 'memorywalker.rollout/v1',
        id: 'utf8',
        vocab: 272,
        events: [
          { op: 'append', role: 'prompt', text: 'café!' },
          { op: 'append', role: 'act', text: 'ok' },
          { op: 'edit', view: [{ keep: [0, 5] }, { keep: [7, 10] }] },
          { op: 'append', role: 'act', text: 'z' },
        ],
      },
      { file: 'utf8.json' },
    );
    const view = buildViewData(r);
    const full = buildPane(view, 'naive-full', 10 + 1);
    expect(full.glyphs.slice(0, 6).map((g) => g.shown)).toEqual(['<prompt>', 'c', 'a', 'f', 'é', '!']);
    expect(full.glyphs[4]).toMatchObject({ first: 4, end: 6 });
    const live = buildPane(view, 'live', 11);
    // The live view kept only the lead byte of é: it reads as a stray byte.
    expect(live.glyphs.slice(0, 5).map((g) => g.shown)).toEqual(['<prompt>', 'c', 'a', 'f', '\\xc3']);
  });

  it('labels targets with their id and text', () => {
    expect(targetLabel(worked, 13)).toBe('id 13 · \\x18 control byte');
    expect(targetLabel(worked, 0)).toBe('id 0 · ⏎ newline');
    expect(targetLabel(session, 1587)).toBe('id 1587 · “T”');
    expect(tokenDescription(session, 1586)).toBe('<act> special token');
  });

  it('write prefixes as runs of ids', () => {
    expect(idRunsText(session.tree.finalPrefix(1587)!)).toBe('1140–1488, 1623–1656, 1586');
    expect(idRunsText(worked.tree.livePrefix(13))).toBe('0–1, 9–10, 7–8, 11–12');
    expect(idRunsText([1, 3, 5, 7], 2)).toBe('1, 3 … (+2 runs)');
    expect(idRunsText([])).toBe('');
  });
});
