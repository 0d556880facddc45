// A drawing surface with two backends, so one chart function draws the page's canvas and the SVG
// export alike: rectangles, polylines, text, a clip rectangle. Coordinates in CSS pixels.

export interface TextStyle {
  color: string;
  size: number;
  weight?: number;
  align?: 'left' | 'center' | 'right';
  baseline?: 'top' | 'middle' | 'bottom' | 'alphabetic';
}

export interface Surface {
  rect(color: string, x: number, y: number, w: number, h: number, alpha?: number): void;
  polyline(color: string, width: number, points: readonly (readonly [number, number])[], dash?: readonly number[]): void;
  circle(color: string, x: number, y: number, r: number): void;
  /** A filled polygon (a band between two curves). */
  polygon(color: string, points: readonly (readonly [number, number])[], alpha?: number): void;
  text(text: string, x: number, y: number, style: TextStyle): void;
  clip(x: number, y: number, w: number, h: number): void;
  unclip(): void;
}

export const FONT = 'Inter, system-ui, -apple-system, "Segoe UI", sans-serif';

export function canvasSurface(ctx: CanvasRenderingContext2D): Surface {
  return {
    rect(color, x, y, w, h, alpha = 1) {
      ctx.globalAlpha = alpha;
      ctx.fillStyle = color;
      ctx.fillRect(x, y, w, h);
      ctx.globalAlpha = 1;
    },
    polyline(color, width, points, dash = []) {
      if (points.length === 0) return;
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.lineJoin = 'round';
      ctx.setLineDash(dash as number[]);
      ctx.beginPath();
      ctx.moveTo(points[0][0], points[0][1]);
      for (let i = 1; i < points.length; i++) ctx.lineTo(points[i][0], points[i][1]);
      ctx.stroke();
      ctx.setLineDash([]);
    },
    circle(color, x, y, r) {
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.arc(x, y, r, 0, 2 * Math.PI);
      ctx.fill();
    },
    polygon(color, points, alpha = 1) {
      if (points.length < 3) return;
      ctx.globalAlpha = alpha;
      ctx.fillStyle = color;
      ctx.beginPath();
      ctx.moveTo(points[0][0], points[0][1]);
      for (let i = 1; i < points.length; i++) ctx.lineTo(points[i][0], points[i][1]);
      ctx.closePath();
      ctx.fill();
      ctx.globalAlpha = 1;
    },
    text(text, x, y, style) {
      ctx.fillStyle = style.color;
      ctx.font = `${style.weight ?? 400} ${style.size}px ${FONT}`;
      ctx.textAlign = style.align ?? 'left';
      ctx.textBaseline = style.baseline ?? 'alphabetic';
      ctx.fillText(text, x, y);
    },
    clip(x, y, w, h) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, w, h);
      ctx.clip();
    },
    unclip() {
      ctx.restore();
    },
  };
}

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const n = (v: number) => (Math.round(v * 100) / 100).toString();

/** An SVG document builder; `document()` returns the file text. */
export function svgSurface(width: number, height: number, background: string): Surface & { document(): string } {
  const parts: string[] = [];
  let clips = 0;
  let open = 0;
  const anchor = { left: 'start', center: 'middle', right: 'end' } as const;
  const baseline = { top: 'hanging', middle: 'middle', bottom: 'text-after-edge', alphabetic: 'alphabetic' } as const;
  return {
    rect(color, x, y, w, h, alpha = 1) {
      parts.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${color}"${alpha < 1 ? ` fill-opacity="${alpha}"` : ''}/>`);
    },
    polyline(color, width, points, dash = []) {
      if (points.length === 0) return;
      const d = points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ');
      parts.push(
        `<polyline points="${d}" fill="none" stroke="${color}" stroke-width="${width}" stroke-linejoin="round"${dash.length ? ` stroke-dasharray="${dash.join(' ')}"` : ''}/>`,
      );
    },
    circle(color, x, y, r) {
      parts.push(`<circle cx="${n(x)}" cy="${n(y)}" r="${n(r)}" fill="${color}"/>`);
    },
    polygon(color, points, alpha = 1) {
      if (points.length < 3) return;
      parts.push(`<polygon points="${points.map(([x, y]) => `${n(x)},${n(y)}`).join(' ')}" fill="${color}"${alpha < 1 ? ` fill-opacity="${alpha}"` : ''}/>`);
    },
    text(text, x, y, style) {
      parts.push(
        `<text x="${n(x)}" y="${n(y)}" fill="${style.color}" font-size="${style.size}" font-weight="${style.weight ?? 400}" font-family='${FONT}' ` +
          `text-anchor="${anchor[style.align ?? 'left']}" dominant-baseline="${baseline[style.baseline ?? 'alphabetic']}">${escapeXml(text)}</text>`,
      );
    },
    clip(x, y, w, h) {
      const id = `clip${clips++}`;
      parts.push(`<clipPath id="${id}"><rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}"/></clipPath><g clip-path="url(#${id})">`);
      open++;
    },
    unclip() {
      if (open > 0) {
        parts.push('</g>');
        open--;
      }
    },
    document() {
      return (
        `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">` +
        `<rect width="100%" height="100%" fill="${background}"/>${parts.join('')}${'</g>'.repeat(open)}</svg>\n`
      );
    },
  };
}
