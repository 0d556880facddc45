// The export buttons of a view panel.
export function ExportButtons({ name, onPng, onSvg }: { name: string; onPng: () => void | Promise<void>; onSvg: () => void }) {
  return (
    <div className="exports" role="group" aria-label={`Export the ${name}`}>
      <button type="button" onClick={onSvg} data-testid={`export-${name}-svg`} title={`Save the ${name} as SVG`}>
        SVG
      </button>
      <button type="button" onClick={() => void onPng()} data-testid={`export-${name}-png`} title={`Save the ${name} as PNG (2x)`}>
        PNG
      </button>
    </div>
  );
}
