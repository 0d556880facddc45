// How far the model reached into the shown rollout (docs/methods.md, "Long sessions"): per method the targets
// beyond its positions, which are not scored, and the window setting that scores them on the last N − 1 tokens
// of their context (the same cut for every method; the drift is then windowed, and the panel says so).
import { useState } from 'react';
import { reachNotes, type DriftData } from '../../core/drift';
import { useWorkbench } from '../../store';

export function DriftReach({ drift }: { drift: DriftData }) {
  const notes = reachNotes(drift);
  return (
    <div className="drift-reach">
      {notes.length > 0 && (
        <ul className="caption" data-testid="drift-reach">
          {notes.map((line) => (
            <li key={line}>{line}</li>
          ))}
        </ul>
      )}
      <WindowForm positions={drift.reach?.positions ?? null} />
    </div>
  );
}

/** The window setting: a number of positions (2 .. the model's), or empty for none; taken on Enter or when the field is left. */
function WindowForm({ positions }: { positions: number | null }) {
  const window = useWorkbench((s) => s.driftWindow);
  const setWindow = useWorkbench((s) => s.setDriftWindow);
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const shown = draft ?? (window === null ? '' : String(window));
  const take = () => {
    if (draft === null) return;
    const text = draft.trim();
    if (text === '') {
      setError(null);
      setDraft(null);
      void setWindow(null);
      return;
    }
    const n = Number(text);
    const most = positions ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isInteger(n) || n < 2 || n > most) {
      setError(`a window is a whole number of positions from 2 to ${positions === null ? "the model's" : positions.toLocaleString('en-US')}`);
      return;
    }
    setError(null);
    setDraft(null);
    void setWindow(n);
  };
  return (
    <div className="sampler" aria-label="Window">
      <label title="Score every target on the last N positions of its context: N − 1 tokens and itself, at positions 0 .. N − 1, for every method alike. Empty: no window (targets beyond the model's positions are not scored).">
        window
        <input
          type="number"
          min={2}
          step={1}
          value={shown}
          placeholder="none"
          data-testid="drift-window"
          onChange={(e) => setDraft(e.currentTarget.value)}
          onBlur={take}
          onKeyDown={(e) => e.key === 'Enter' && take()}
        />
        positions
      </label>
      {error && (
        <span className="error-text" role="alert" data-testid="drift-window-error">
          {error}
        </span>
      )}
    </div>
  );
}
