// What the last import read and skipped, beside the summary: the lines `mw import` prints (every
// skipped record with its line numbers and reason, every record read in part as `file:line: reason`),
// open whenever a record was skipped or not understood, so a skipped record is never silent.
import { useWorkbench } from '../store';
import './importReport.css';

function lineClass(line: string): string {
  if (/^\s*skipped \d+:/.test(line)) return 'report-skipped';
  if (/^\s*\S.*:\d+: /.test(line) || /more problems$/.test(line)) return 'report-problem';
  return 'report-note';
}

export function ImportReport() {
  const report = useWorkbench((s) => s.importReport);
  if (!report) return null;
  const lines = report.text.split('\n');
  const notable = report.skipped > 0 || report.problems > 0;
  const counts = [
    report.skipped ? `${report.skipped} record${report.skipped === 1 ? '' : 's'} skipped` : null,
    report.problems ? `${report.problems} problem${report.problems === 1 ? '' : 's'}` : null,
  ].filter(Boolean);
  return (
    <section
      className={`panel import-report${notable ? ' notable' : ''}`}
      aria-label="Import report"
      data-testid="import-report"
      data-skipped={report.skipped}
      data-problems={report.problems}
    >
      <details open={notable}>
        <summary>
          <strong>Import</strong>
          <span className="muted"> {lines[0]}</span>
          {counts.length > 0 && <span className="report-counts"> · {counts.join(' · ')}</span>}
        </summary>
        {lines.length > 1 && (
          <ul className="report-lines" data-testid="import-report-lines">
            {lines.slice(1).map((line, i) => (
              <li key={i} className={lineClass(line)}>
                {line.trim()}
              </li>
            ))}
          </ul>
        )}
      </details>
    </section>
  );
}
