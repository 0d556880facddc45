// The methods' colours and names for people, shared by the app's views, the tour and the experiment reports:
// a colour, a label and what each method conditions a target on, and the ink of the dark page.
// Colours are plain hex strings (not CSS variables) so exported SVG/PNG files look like the page.
import type { Method } from '../plan/types';

export interface MethodStyle {
  id: Method;
  label: string;
  short: string;
  color: string;
  /** Which prefix the method conditions each target on, in the paper's words. */
  sees: string;
}

/** In METHODS order. */
export const METHOD_STYLES: readonly MethodStyle[] = [
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

export const METHOD_BY_ID: Record<Method, MethodStyle> = Object.fromEntries(METHOD_STYLES.map((m) => [m.id, m])) as Record<Method, MethodStyle>;

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
