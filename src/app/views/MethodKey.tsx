// The method colours, as the panels' legends show them: the same five swatches everywhere.
import { METHODS } from './palette';

export function MethodKey({ caption }: { caption: string }) {
  return (
    <li className="method-key">
      <span>{caption}</span>
      {METHODS.map((m) => (
        <span key={m.id} className="method-swatch" title={m.sees}>
          <i style={{ background: m.color }} />
          {m.label}
        </span>
      ))}
    </li>
  );
}
