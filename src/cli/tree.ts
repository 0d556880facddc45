// `mw tree FILE [--json] [--per-target]`: the section-3 figures of each rollout in FILE.

import { deriveTree } from '../tree/derive';
import { perTargetReport } from '../tree/report';
import type { ConditioningTree, TreeFigures } from '../tree/types';
import type { Command } from './command';
import { fileArgument, formatIds, formatTable, loadRolloutFile, perFile, printJson } from './shared';

const FIGURES: (keyof TreeFigures)[] = [
  'K',
  'branches',
  'physicalLength',
  'finalWalkLength',
  'packedLength',
  'targets',
  'droppedTargets',
  'divergingLeaves',
  'evictionMassTotal',
  'evictionMassMax',
];

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
  usage: ['mw tree FILE [--json] [--per-target]'],
  details: 'FILE is a rollout (.json), a data set (.jsonl, one rollout per line) or any importable format.',
  flags: {
    json: { type: 'boolean', help: 'print JSON: one object for a .json file, an array (file order) for JSONL' },
    'per-target': { type: 'boolean', help: 'add each target: segment, live and final prefix, eviction mass, diverging' },
  },
  async run(args, io) {
    const file = await loadRolloutFile(fileArgument(args));
    const trees = file.rollouts.map(deriveTree);
    const perTarget = args.flags['per-target'] === true;
    if (args.flags.json) {
      printJson(
        io,
        perFile(
          file,
          trees.map((tree) => (perTarget ? { ...tree.figures, perTarget: perTargetReport(tree) } : tree.figures)),
        ),
      );
      return 0;
    }
    io.out(formatTable(['rollout', ...FIGURES], trees.map((tree) => [tree.rollout.id, ...FIGURES.map((f) => tree.figures[f])])));
    if (perTarget) for (const tree of trees) io.out(`\n${tree.rollout.id}\n${targetTable(tree)}`);
    return 0;
  },
};
