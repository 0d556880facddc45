// A glossary term inside a drift caption (logdiff, μ, expected μ, conditioning drift, KL_SDCC, D,
// eviction mass, N_packed), by the name the captions use: a link to its entry in the glossary.
import type { ReactNode } from 'react';
import { Term as GlossaryTerm } from '../../glossary/Term';

export type TermName = 'logdiff' | 'μ' | 'expected μ' | 'conditioning drift' | 'KL_SDCC' | 'D' | 'eviction mass' | 'N_packed';

const ENTRY: Readonly<Record<TermName, string>> = {
  logdiff: 'logdiff',
  μ: 'signed-drift',
  'expected μ': 'expected-drift',
  'conditioning drift': 'conditioning-drift',
  KL_SDCC: 'kl_sdcc',
  D: 'd',
  'eviction mass': 'eviction-mass',
  N_packed: 'n_packed',
};

export function Term({ name, children }: { name: TermName; children?: ReactNode }) {
  return <GlossaryTerm id={ENTRY[name]}>{children ?? name}</GlossaryTerm>;
}
