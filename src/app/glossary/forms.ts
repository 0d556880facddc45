// The words by which the views' labels name glossary entries (docs/glossary.md's anchors): a label's
// text is cut at those words so each links to its entry, and the end-to-end test flags any label
// that names one without linking it. Plain data and one function, so Node tests can read it too.

/**
 * Per entry, the forms labels use for it. A form with a capital letter or a symbol matches exactly;
 * an all-lower-case form matches in any case. Everyday words the views explain in place (target,
 * segment, physical id) are entries but not forms, so that not every label becomes a link.
 */
export const TERM_FORMS: Readonly<Record<string, readonly string[]>> = {
  'conditioning-tree': ['conditioning tree'],
  'live-view': ['live view', 'live views'],
  edit: ['edits', 'edit'],
  junction: ['junctions', 'junction'],
  branch: ['branches', 'branch'],
  'final-walk': ['final walk'],
  'physical-tape': ['physical tape', 'L tape'],
  'live-prefix': ['live prefix', 'live prefixes'],
  'final-prefix': ['final prefix'],
  'full-prefix': ['full prefix'],
  'dropped-target': ['dropped targets', 'dropped target', 'dropped'],
  'replicated-copy': ['replicated copies', 'replicated copy', 'replicated context copy'],
  n_packed: ['N_packed', 'N packed'],
  n_final: ['N_final'],
  'eviction-mass': ['eviction mass'],
  'diverging-leaf': ['diverging leaves', 'diverging leaf', 'diverging'],
  d: ['D'],
  k: ['K'],
  logdiff: ['logdiff'],
  'signed-drift': ['signed drift μ', 'signed drift', 'μ'],
  'expected-drift': ['expected μ', 'expected drift'],
  'conditioning-drift': ['conditioning drift', 'cond. drift'],
  kl_sdcc: ['KL_SDCC'],
  'time-travel-leakage': ['time-travel leakage', 'time-travel', 'future'],
  'stale-context': ['stale context', 'stale'],
  logittree: ['LogitTree'],
  'packed-4d-mask': ['Packed 4D mask', 'packed 4D mask', '4D mask'],
  sdcc: ['SDCC'],
  'naive-compressed': ['Naive-Compressed'],
  'naive-full': ['Naive-Full'],
};

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const exact = (form: string) => /[A-Z]|[^\x00-\x7f]/.test(form);

/** Longest forms first, so `expected μ` wins over `μ` and `diverging leaf` over `diverging`. */
const FORMS = Object.entries(TERM_FORMS)
  .flatMap(([id, forms]) => forms.map((form) => ({ id, form })))
  .sort((a, b) => b.form.length - a.form.length);

/** A lower-case form in any case, without the `i` flag (which would also loosen the exact forms). */
const anyCase = (form: string) => [...form].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : escapeRegExp(c))).join('');

const PATTERN = new RegExp(
  `(?<![\\p{L}\\p{N}_])(?:${FORMS.map(({ form }) => (exact(form) ? escapeRegExp(form) : anyCase(form))).join('|')})(?![\\p{L}\\p{N}_])`,
  'gu',
);

function idOfMatch(match: string): string {
  for (const { id, form } of FORMS) if (exact(form) ? match === form : match.toLowerCase() === form) return id;
  throw new Error(`no glossary form matches "${match}"`);
}

export type TermPiece = string | { id: string; text: string };

/** Labels already cut (the views render the same labels on every redraw); a few hundred at most. */
const cut = new Map<string, readonly TermPiece[]>();

/** `text` cut into plain strings and the glossary terms it names, in order (the same array for the same text: not to be changed). */
export function splitTerms(text: string): readonly TermPiece[] {
  const known = cut.get(text);
  if (known) return known;
  const out: TermPiece[] = [];
  let at = 0;
  for (const m of text.matchAll(PATTERN)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push({ id: idOfMatch(m[0]), text: m[0] });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  if (cut.size >= 1000) cut.clear();
  cut.set(text, out);
  return out;
}
