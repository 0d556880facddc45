// The summary's CSV button: the per-target table of the open rollout.
import { downloadText, fileStem } from '../../export/download';
import { useWorkbench } from '../../store';
import { targetsCsv } from '../../export/targetsCsv';

export function ExportCsvButton() {
  const view = useWorkbench((s) => s.view);
  const drift = useWorkbench((s) => (s.driftView === s.view ? s.drift : null));
  if (!view) return null;
  return (
    <div className="exports">
      <button
        type="button"
        data-testid="export-targets-csv"
        title="Save the per-target table (facts and method prefixes) as CSV"
        onClick={() => downloadText(targetsCsv(view, drift), `${fileStem(view.rollout.id)}-targets.csv`, 'text/csv')}
      >
        Targets CSV
      </button>
    </div>
  );
}
