// A term of the glossary inside a caption (logdiff, μ, expected μ, conditioning drift, KL_SDCC, D,
// eviction mass, N_packed): plain text, marked with its name so it can become a link to its entry.
import type { ReactNode } from 'react';

export type TermName = 'logdiff' | 'μ' | 'expected μ' | 'conditioning drift' | 'KL_SDCC' | 'D' | 'eviction mass' | 'N_packed';

export function Term({ name, children }: { name: TermName; children?: ReactNode }) {
  return (
    <span className="term" data-term={name}>
      {children ?? name}
    </span>
  );
}
