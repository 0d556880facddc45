// What the context panes point at, drawn over the conditioning tree: every trie node of the ids
// under the pointer (in any view), and of find's current match. An id has one node per branch
// path that holds it (its replicated copies included), so a hovered summary lights up in each.
import type { TreeEdge, TreeModel } from '../../core/treeModel';
import type { ViewData } from '../../core/viewData';
import { useTextMarks } from '../common/useTextMarks';

interface Props {
  view: ViewData;
  model: TreeModel;
  /** Width of one position, pixels. */
  step: number;
  xMin: number;
  xMax: number;
  /** Centre line of an edge's strip, and the strip's height. */
  rowY: (edge: TreeEdge) => number;
  stripH: number;
}

export function TreeTextMarks({ view, model, step, xMin, xMax, rowY, stripH }: Props) {
  const { marks } = useTextMarks();
  // Built with the model in the rollout worker (a million nodes would be 100 ms here).
  const index = model.nodesById;
  const rects = (span: { first: number; end: number } | null, color: string, key: string) => {
    if (!span) return [];
    const out = [];
    for (let id = Math.max(0, span.first); id < Math.min(span.end, view.rollout.length); id++) {
      for (let k = index.start[id]; k < index.start[id + 1]; k++) {
        const n = index.nodes[k];
        const e = model.edges[model.edgeOf[n]];
        const x = (e.depth + n - e.from) * step;
        if (x + step < xMin || x > xMax) continue;
        out.push(
          <rect
            key={`${key}${n}`}
            x={x - 1}
            y={rowY(e) - stripH / 2 - 1}
            width={Math.max(step - 1, 2) + 2}
            height={stripH + 2}
            fill={color}
            fillOpacity={0.45}
            stroke={color}
            strokeWidth={1.2}
            data-mark={key}
          />,
        );
      }
    }
    return out;
  };
  return (
    <g className="tree-text-marks" pointerEvents="none">
      {rects(marks.current, '#f2a541', 'match')}
      {rects(marks.hover, '#ffffff', 'hover')}
    </g>
  );
}
