// `mw tree FILE [--json] [--per-target]`: the section-3 figures of each rollout in FILE, read one
// rollout at a time (memory follows the largest rollout, not the file); per-target output streams.
// `--json` prints each rollout as a row `{id, ...figures, reward}` (src/tree/rolloutRow.ts): the
// columns of the app's data-set table and its CSV.

import { deriveFigures, deriveTargetFacts } from '../tree/derive';
import { branchView, targetRowAt, type TargetRow } from '../tree/report';
import { rolloutRow, TREE_FIGURES, type RolloutRow } from '../tree/rolloutRow';
import type { TargetFacts } from '../tree/types';
import type { Command } from './command';
import { MAX_PACKED_FLAG, checkPackedSize, createJsonOutput, fileArgument, formatTable, maxPackedFlag, openRolloutFile, validateRolloutFile } from './shared';

/** Half-open ranges as id runs, e.g. [[0,2],[9,11]] -> "0-1 9-10". */
function formatRanges(ranges: [number, number][]): string {
  return ranges.map(([a, b]) => (b - a === 1 ? `${a}` : `${a}-${b - 1}`)).join(' ') || '(empty)';
}

/** One rollout's per-target text: its branches spelled once, then a row per target naming its prefixes by length. */
async function writeTargetTable(tree: TargetFacts, write: (text: string) => Promise<void>): Promise<void> {
  for (let k = 0; k <= tree.K; k++) await write(`branch ${k}${k === tree.K ? ' (final walk)' : ''}: ${formatRanges(branchView(tree, k))}\n`);
  const headers = ['target', 'segment', 'live prefix', 'final prefix', 'evictionMass', 'diverging'];
  const cell = (r: TargetRow) => [
    r.id,
    r.segment,
    `${r.livePrefix} of branch ${r.segment}`,
    r.finalPrefix === null ? 'dropped' : `${r.finalPrefix} of branch ${tree.K}`,
    r.evictionMass ?? '-',
    r.diverging ? 'yes' : '',
  ];
  // Column widths from the widest values, so rows stream without holding the table.
  const last = tree.targets.length ? tree.targets[tree.targets.length - 1] : 0;
  const widest = [
    String(last).length,
    String(tree.K).length,
    `${tree.figures.physicalLength} of branch ${tree.K}`.length,
    `${tree.figures.physicalLength} of branch ${tree.K}`.length,
    Math.max(1, String(tree.figures.physicalLength).length),
    3,
  ];
  const widths = headers.map((h, c) => Math.max(h.length, widest[c]));
  const numeric = [true, true, false, false, true, false];
  const line = (cells: (string | number)[], header = false) =>
    `${cells
      .map((v, c) => (numeric[c] && !header ? String(v).padStart(widths[c]) : String(v).padEnd(widths[c])))
      .join('  ')
      .trimEnd()}\n`;
  let chunk = line(headers, true);
  for (let i = 0; i < tree.targets.length; i++) {
    chunk += line(cell(targetRowAt(tree, i)));
    if ((i & 255) === 255) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
}

export const treeCommand: Command = {
  name: 'tree',
  summary: 'figures of the conditioning tree: K, branches, L, N_packed, dropped, diverging leaves, eviction mass',
  usage: ['mw tree FILE [--json] [--per-target] [--max-packed N]'],
  details: [
    'FILE is a rollout (.json), a data set (.jsonl, one rollout per line) or any importable format.',
    'The figures are counted from the events (N_packed without building the trie), whatever its size;',
    '--per-target adds each target (still without the trie) and refuses a rollout whose N_packed is above --max-packed.',
  ].join('\n'),
  flags: {
    json: { type: 'boolean', help: 'print JSON: one object for a .json file, an array (file order) for JSONL' },
    'per-target': { type: 'boolean', help: 'add each branch (id ranges) and each target: segment, live and final prefix lengths, eviction mass, diverging' },
    'max-packed': MAX_PACKED_FLAG,
  },
  async run(args, io) {
    const limit = maxPackedFlag(args);
    const stream = await openRolloutFile(fileArgument(args));
    const perTarget = args.flags['per-target'] === true;
    if (!perTarget) {
      // The figures of each rollout are a few numbers: kept, printed once the whole file is read.
      const rows: RolloutRow[] = [];
      for await (const rollout of stream.rollouts()) rows.push(rolloutRow(rollout));
      if (args.flags.json) io.out(`${JSON.stringify(stream.layout === 'json' ? rows[0] : rows)}\n`);
      else
        io.out(
          formatTable(
            ['rollout', ...TREE_FIGURES],
            rows.map((r) => [r.id, ...TREE_FIGURES.map((f) => r[f])]),
          ),
        );
      return 0;
    }
    // Per-target output grows with targets × prefix length: a JSONL file is validated and sized first,
    // then each rollout's output is written as it is derived; a .json file (one rollout) is read once,
    // sized from its facts (N_packed counted, no tree built) before anything is written.
    if (args.flags.json) {
      if (stream.layout === 'jsonl') await validateRolloutFile(stream, { limit });
      const out = createJsonOutput(io, stream.layout);
      for await (const rollout of stream.rollouts()) {
        const tree = deriveTargetFacts(rollout);
        checkPackedSize(rollout, tree.figures.packedLength, limit);
        await out.item(async (write) => {
          const views = Array.from({ length: tree.K + 1 }, (_, k) => branchView(tree, k));
          await write(`${JSON.stringify(rolloutRow(rollout, tree.figures)).slice(0, -1)},"branchViews":${JSON.stringify(views)},"perTarget":[`);
          let chunk: string[] = [];
          for (let i = 0; i < tree.targets.length; i++) {
            chunk.push(JSON.stringify(targetRowAt(tree, i)));
            if (chunk.length === 256 || i === tree.targets.length - 1) {
              await write((i >= chunk.length ? ',' : '') + chunk.join(','));
              chunk = [];
            }
          }
          await write(']}');
        });
      }
      out.finish();
      return 0;
    }
    // The table of figures needs the whole file first (which validates it), then one table per rollout.
    const rows: (string | number)[][] = [];
    for await (const rollout of stream.rollouts()) {
      const figures = deriveFigures(rollout); // N_packed counted, no tree built: the size is checked from it
      checkPackedSize(rollout, figures.packedLength, limit);
      rows.push([rollout.id, ...TREE_FIGURES.map((f) => figures[f])]);
    }
    io.out(formatTable(['rollout', ...TREE_FIGURES], rows));
    const write = async (text: string) => {
      io.out(text);
      await io.drain?.();
    };
    for await (const rollout of stream.rollouts()) {
      await write(`\n${rollout.id}\n`);
      await writeTargetTable(deriveTargetFacts(rollout), write);
    }
    return 0;
  },
};
