// One palette for every view, legend and export: a colour per replay method and per token state.
// Colours are plain hex strings (not CSS variables) so exported SVG/PNG files look like the page.
import type { MethodId } from '../url/schema';

export interface MethodStyle {
  id: MethodId;
  label: string;
  short: string;
  color: string;
  /** Which prefix the method conditions each target on, in the paper's words. */
  sees: string;
}

export const METHODS: readonly MethodStyle[] = [
  {
    id: 'naive-compressed',
    label: 'Naive-Compressed',
    short: 'Compr.',
    color: '#ff6b6b',
    sees: 'final prefix: later edits leak back (time-travel)',
  },
  {
    id: 'naive-full',
    label: 'Naive-Full',
    short: 'Full',
    color: '#ffb347',
    sees: 'full prefix: evicted content revived (stale)',
  },
  { id: 'logit-tree', label: 'LogitTree', short: 'LogitTree', color: '#4fd1c5', sees: 'live prefix, one sequence per branch' },
  { id: 'packed-4d', label: 'Packed 4D mask', short: '4D', color: '#63a4ff', sees: 'live prefix, one packed trie' },
  {
    id: 'sdcc',
    label: 'SDCC',
    short: 'SDCC',
    color: '#c792ea',
    sees: 'student: final prefix; teacher (diverging leaves): live prefix',
  },
];

export const METHOD_BY_ID: Record<MethodId, MethodStyle> = Object.fromEntries(METHODS.map((m) => [m.id, m])) as Record<
  MethodId,
  MethodStyle
>;

/** Cell classes of the staircase; the numeric codes index CELL_COLORS. */
export const CELL = {
  none: 0,
  prompt: 1,
  obs: 2,
  act: 3,
  inserted: 4,
  evicted: 5,
  target: 6,
} as const;
export type CellClass = (typeof CELL)[keyof typeof CELL];

export const CELL_COLORS: Record<CellClass, string> = {
  0: '#0f1419',
  1: '#3d5a80',
  2: '#52708f',
  3: '#2e8b7f',
  4: '#8a6fd1',
  5: '#3a2226',
  6: '#f7e07e',
};

export const CELL_LEGEND: { cls: CellClass; label: string }[] = [
  { cls: CELL.prompt, label: 'live: prompt' },
  { cls: CELL.obs, label: 'live: observation' },
  { cls: CELL.act, label: 'live: earlier output' },
  { cls: CELL.inserted, label: 'inserted by an edit' },
  { cls: CELL.evicted, label: 'evicted' },
  { cls: CELL.target, label: 'target (decoded here)' },
];

export const INK = {
  bg: '#0f1419',
  panel: '#161d25',
  line: '#26313d',
  grid: '#1d2630',
  text: '#d7dee6',
  muted: '#8a97a6',
  edit: '#f2a541',
  select: '#ffffff',
};
