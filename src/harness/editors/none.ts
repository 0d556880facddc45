// `none`: the live view only grows; K = 0 and the rollout is a single branch (the drift floor).

import type { Editor, NoneSpec } from './types';

export function createNoneEditor(spec: NoneSpec = { kind: 'none' }): Editor {
  return { spec, beforeDecode: () => null, onAct: () => null };
}
