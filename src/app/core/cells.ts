// The state of a token in a context, as the staircase and the tree colour it: which role put it
// there, inserted by an edit, evicted, or the target decoded there. Codes, colours and legend.
// Colours are plain hex strings (not CSS variables) so exported SVG/PNG files look like the page.

/** Cell classes; the numeric codes index CELL_COLORS. */
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
