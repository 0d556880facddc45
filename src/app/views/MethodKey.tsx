// The method colours, as the panels' legends show them: the same five swatches everywhere.
import { METHOD_STYLES } from '../../present/palette';
import { TermText } from '../glossary/Term';

export function MethodKey({ caption }: { caption: string }) {
  return (
    <li className="method-key">
      <span>
        <TermText text={caption} />
      </span>
      {METHOD_STYLES.map((m) => (
        <span key={m.id} className="method-swatch" title={m.sees}>
          <i style={{ background: m.color }} />
          <TermText text={m.label} />
        </span>
      ))}
    </li>
  );
}
