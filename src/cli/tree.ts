// `mw tree FILE [--json] [--per-target]`: the section-3 figures of each rollout in FILE, read one
// rollout at a time (memory follows the largest rollout, not the file); per-target output streams.
// `--json` prints each rollout as a row `{id, ...figures, reward}` (src/tree/rolloutRow.ts): the
// columns of the app's data-set table and its CSV.

import { deriveFigures, deriveTree } from '../tree/derive';
import { perTargetReport, targetReport } from '../tree/report';
import { rolloutRow, TREE_FIGURES, type RolloutRow } from '../tree/rolloutRow';
import type { ConditioningTree } from '../tree/types';
import type { Command } from './command';
import { MAX_PACKED_FLAG, checkSize, createJsonOutput, fileArgument, formatIds, formatTable, maxPackedFlag, openRolloutFile, validateRolloutFile } from './shared';


function targetTable(tree: ConditioningTree): string {
  const rows = perTargetReport(tree).map((t) => [
    t.id,
    t.segment,
    formatIds(t.livePrefix),
    t.finalPrefix ? formatIds(t.finalPrefix) : 'dropped',
    t.evictionMass ?? '-',
    t.diverging ? 'yes' : '',
  ]);
  return formatTable(['target', 'segment', 'live prefix', 'final prefix', 'evictionMass', 'diverging'], rows);
}

export const treeCommand: Command = {
  name: 'tree',
  summary: 'figures of the conditioning tree: K, branches, L, N_packed, dropped, diverging leaves, eviction mass',
  usage: ['mw tree FILE [--json] [--per-target] [--max-packed N]'],
  details: [
    'FILE is a rollout (.json), a data set (.jsonl, one rollout per line) or any importable format.',
    'The figures are counted from the events (N_packed without building the trie), whatever its size;',
    '--per-target builds each tree, and refuses a rollout whose N_packed is above --max-packed.',
  ].join('\n'),
  flags: {
    json: { type: 'boolean', help: 'print JSON: one object for a .json file, an array (file order) for JSONL' },
    'per-target': { type: 'boolean', help: 'add each target: segment, live and final prefix, eviction mass, diverging' },
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
      else io.out(formatTable(['rollout', ...TREE_FIGURES], rows.map((r) => [r.id, ...TREE_FIGURES.map((f) => r[f])])));
      return 0;
    }
    // Per-target output grows with targets × prefix length: the file is validated first, then
    // each rollout's output is written as it is derived.
    if (args.flags.json) {
      await validateRolloutFile(stream, { limit });
      const out = createJsonOutput(io, stream.layout);
      for await (const rollout of stream.rollouts()) {
        const tree = deriveTree(rollout);
        await out.item(async (write) => {
          await write(`${JSON.stringify(rolloutRow(rollout, tree.figures)).slice(0, -1)},"perTarget":[`);
          let chunk: string[] = [];
          for (let i = 0; i < tree.targets.length; i++) {
            chunk.push(JSON.stringify(targetReport(tree, tree.targets[i])));
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
      checkSize(rollout, limit);
      const figures = deriveFigures(rollout);
      rows.push([rollout.id, ...TREE_FIGURES.map((f) => figures[f])]);
    }
    io.out(formatTable(['rollout', ...TREE_FIGURES], rows));
    for await (const rollout of stream.rollouts()) {
      io.out(`\n${rollout.id}\n${targetTable(deriveTree(rollout))}`);
      await io.drain?.();
    }
    return 0;
  },
};
