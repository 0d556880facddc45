// One histogram card of the drift panel: bars over the axis, the tails beyond it in two overflow bars
// at the ends (their counts written above them), the largest count on the count axis (linear or
// log), and under the plot, in words, the bin the pointer is over.
import { scaleLinear, scaleSymlog } from 'd3';
import { useState, type ReactNode } from 'react';
import { INK } from '../../../present/palette';
import { describeBin, type BinRef, type Bins } from '../../core/histogram';

const W = 200;
const H = 104;
const PAD = { left: 6, right: 6, top: 22, bottom: 16 };
/** Width of an overflow bar and its gap to the axis. */
const TAIL = 9;
const GAP = 5;

export interface DriftHistogramProps {
  title: ReactNode;
  color: string;
  /** The figure on the right of the title (e.g. μ −0.017). */
  figure: ReactNode;
  bins: Bins;
  log: boolean;
  format(x: number): string;
  unit?: string;
  testId: string;
  /** What the histogram counts, for the readout before the pointer is over a bar. */
  idle?: string;
}

export function DriftHistogram({ title, color, figure, bins, log, format, unit = 'nats', testId, idle }: DriftHistogramProps) {
  const [hover, setHover] = useState<BinRef | null>(null);
  const inner = { left: PAD.left + TAIL + GAP, right: W - PAD.right - TAIL - GAP };
  const x = scaleLinear().domain([bins.lo, bins.hi]).range([inner.left, inner.right]);
  const max = Math.max(1, bins.below, bins.above, ...bins.counts);
  const y = (log ? scaleSymlog().constant(1) : scaleLinear()).domain([0, max]).range([H - PAD.bottom, PAD.top]);
  const base = H - PAD.bottom;
  const bars: { ref: BinRef; x: number; w: number; n: number; tail: boolean }[] = bins.counts.map((n, index) => ({
    ref: { kind: 'bin', index },
    x: x(bins.edges[index]),
    w: x(bins.edges[index + 1]) - x(bins.edges[index]),
    n,
    tail: false,
  }));
  bars.push({ ref: { kind: 'below' }, x: PAD.left, w: TAIL, n: bins.below, tail: true });
  bars.push({ ref: { kind: 'above' }, x: W - PAD.right - TAIL, w: TAIL, n: bins.above, tail: true });
  const same = (a: BinRef | null, b: BinRef) => !!a && a.kind === b.kind && (a.kind !== 'bin' || (b.kind === 'bin' && a.index === b.index));
  const readout = hover ? describeBin(bins, hover, format, unit) : (idle ?? `${bins.total} targets · hover a bar`);
  const zero = bins.lo < 0 && bins.hi > 0;
  return (
    <figure className="histogram-card" data-testid={testId} data-total={bins.total} data-below={bins.below} data-above={bins.above}>
      <svg width={W} height={H} className="histogram" onMouseLeave={() => setHover(null)}>
        <text x={PAD.left} y={12} fontSize={11} fill={color} fontWeight={600}>
          {title}
        </text>
        <text x={W - PAD.right} y={12} fontSize={10.5} fill={INK.muted} textAnchor="end">
          {figure}
        </text>
        {/* the count axis: its top value */}
        <line x1={inner.left} x2={inner.right} y1={y(max) + 0.5} y2={y(max) + 0.5} stroke={INK.grid} strokeDasharray="2 3" />
        <text x={inner.left + 2} y={y(max) - 2} fontSize={9} fill={INK.muted}>
          {max}
          {log ? ' (log)' : ''}
        </text>
        {bars.map((b, i) => (
          <g key={i}>
            {b.n > 0 && (
              <rect
                x={b.x + 0.5}
                y={y(b.n)}
                width={Math.max(1, b.w - 1)}
                height={base - y(b.n)}
                fill={color}
                opacity={b.tail ? 0.55 : same(hover, b.ref) ? 1 : 0.85}
                stroke={same(hover, b.ref) ? INK.text : 'none'}
                strokeWidth={0.8}
              />
            )}
            {b.tail && b.n > 0 && (
              <text x={b.x + b.w / 2} y={y(b.n) - 3} fontSize={9} fill={INK.text} textAnchor="middle">
                {b.n}
              </text>
            )}
            {/* hit area: the whole column, so empty bins are described too */}
            <rect
              x={b.x}
              y={PAD.top - 4}
              width={b.w}
              height={base - PAD.top + 4}
              fill="transparent"
              onMouseEnter={() => setHover(b.ref)}
              data-bin={b.ref.kind === 'bin' ? b.ref.index : b.ref.kind}
            >
              <title>{describeBin(bins, b.ref, format, unit)}</title>
            </rect>
          </g>
        ))}
        {zero && <line x1={x(0)} x2={x(0)} y1={PAD.top - 2} y2={base} stroke={INK.text} strokeDasharray="2 2" strokeWidth={0.8} pointerEvents="none" />}
        <line x1={PAD.left} x2={W - PAD.right} y1={base + 0.5} y2={base + 0.5} stroke={INK.line} />
        <text x={PAD.left + TAIL / 2} y={H - 4} fontSize={9} fill={INK.muted} textAnchor="middle">
          {bins.lo < 0 ? '<' : ''}
        </text>
        <text x={W - PAD.right - TAIL / 2} y={H - 4} fontSize={9} fill={INK.muted} textAnchor="middle">
          &gt;
        </text>
        {[bins.lo, ...(zero ? [0] : []), bins.hi].map((t) => (
          <text key={t} x={x(t)} y={H - 4} fontSize={9} fill={INK.muted} textAnchor={t === bins.lo ? 'start' : t === bins.hi ? 'end' : 'middle'}>
            {format(t)}
          </text>
        ))}
      </svg>
      <figcaption className="bin-readout" data-testid={`${testId}-readout`}>
        {readout}
      </figcaption>
    </figure>
  );
}
