// The conditioning-tree stage: rollout in, branches / prefixes / packed trie / figures out.
export { deriveTree, packedLength, withPrefixes } from './derive';
export { buildPackedTrie, type PackedTrie } from './trie';
export { perTargetReport, targetReport, type TargetReport } from './report';
export type { ConditioningTree, ConditioningTreeData, EditInfo, TreeFigures } from './types';
export { ROLLOUT_ROW_FIELDS, rolloutRow, type RolloutRow } from './rolloutRow';
