// A tiny 2D drawing surface with two backends, so one drawing function serves the page (canvas,
// fills batched into one path per colour) and the export (SVG elements). Only what the views use.

export interface TextStyle {
  color: string;
  font: string;
  align?: 'left' | 'center' | 'right';
  baseline?: 'top' | 'middle' | 'bottom' | 'alphabetic';
  /** Rotation in radians about (x, y). */
  rotate?: number;
}

export interface Painter {
  fillRect(color: string, x: number, y: number, w: number, h: number, alpha?: number): void;
  strokeRect(color: string, width: number, x: number, y: number, w: number, h: number): void;
  line(color: string, width: number, x0: number, y0: number, x1: number, y1: number, dash?: number[]): void;
  text(text: string, x: number, y: number, style: TextStyle): void;
  /** Clips later drawing to a rectangle until the matching popClip. */
  pushClip(x: number, y: number, w: number, h: number): void;
  popClip(): void;
  /** Draws anything still batched. */
  flush(): void;
  /**
   * Raster fast path (canvas only): `paint` fills a device-pixel buffer (0xAABBGGRR words) covering
   * the CSS-pixel rectangle (x, y, w, h); `scale` is device pixels per CSS pixel. The buffer may
   * still hold an earlier frame: `paint` writes every word.
   */
  pixels?(x: number, y: number, w: number, h: number, paint: (buffer: Uint32Array, width: number, height: number, scale: number) => void): void;
}

/** '#rrggbb' as a little-endian RGBA word (what ImageData's Uint32 view holds). */
export function rgbaWord(hex: string): number {
  const v = parseInt(hex.slice(1), 16);
  return ((0xff << 24) | ((v & 0xff) << 16) | (v & 0xff00) | ((v >> 16) & 0xff)) >>> 0;
}

/** Per canvas, the ImageData its last `pixels` call painted into. */
const lastImage = new WeakMap<CanvasRenderingContext2D, ImageData>();

export function canvasPainter(ctx: CanvasRenderingContext2D): Painter {
  let batch = new Map<string, Path2D>();
  const flush = () => {
    for (const [key, path] of batch) {
      const [color, alpha] = key.split('|');
      ctx.globalAlpha = Number(alpha);
      ctx.fillStyle = color;
      ctx.fill(path);
    }
    ctx.globalAlpha = 1;
    batch = new Map();
  };
  return {
    fillRect(color, x, y, w, h, alpha = 1) {
      const key = `${color}|${alpha}`;
      let path = batch.get(key);
      if (!path) batch.set(key, (path = new Path2D()));
      path.rect(x, y, w, h);
    },
    strokeRect(color, width, x, y, w, h) {
      flush();
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.strokeRect(x, y, w, h);
    },
    line(color, width, x0, y0, x1, y1, dash = []) {
      flush();
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.setLineDash(dash);
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.lineTo(x1, y1);
      ctx.stroke();
      ctx.setLineDash([]);
    },
    text(text, x, y, style) {
      flush();
      ctx.save();
      ctx.fillStyle = style.color;
      ctx.font = style.font;
      ctx.textAlign = style.align ?? 'left';
      ctx.textBaseline = style.baseline ?? 'alphabetic';
      if (style.rotate) {
        ctx.translate(x, y);
        ctx.rotate(style.rotate);
        ctx.fillText(text, 0, 0);
      } else ctx.fillText(text, x, y);
      ctx.restore();
    },
    pixels(x, y, w, h, paint) {
      flush();
      const m = ctx.getTransform();
      const scale = m.a;
      const px = Math.round(m.e + x * scale);
      const py = Math.round(m.f + y * scale);
      const width = Math.max(1, Math.round(w * scale));
      const height = Math.max(1, Math.round(h * scale));
      // The last buffer of this canvas is reused when the size matches: a fresh one of a few
      // megabytes costs more (allocation, zeroing, page faults) than the painting.
      let image = lastImage.get(ctx);
      if (!image || image.width !== width || image.height !== height) lastImage.set(ctx, (image = ctx.createImageData(width, height)));
      paint(new Uint32Array(image.data.buffer), width, height, scale);
      ctx.putImageData(image, px, py);
    },
    pushClip(x, y, w, h) {
      flush();
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, w, h);
      ctx.clip();
    },
    popClip() {
      flush();
      ctx.restore();
    },
    flush,
  };
}

function esc(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const n = (v: number) => (Math.round(v * 100) / 100).toString();

const BASELINE: Record<NonNullable<TextStyle['baseline']>, string> = {
  top: 'hanging',
  middle: 'central',
  bottom: 'text-after-edge',
  alphabetic: 'alphabetic',
};

/** Parses a CSS font shorthand of the form `[weight ]SIZEpx family`. */
function fontAttrs(font: string): string {
  const m = /^(?:(\d{3}|bold)\s+)?([\d.]+)px\s+(.+)$/.exec(font.trim());
  if (!m) return `font-family="${esc(font)}"`;
  return `${m[1] ? `font-weight="${m[1]}" ` : ''}font-size="${m[2]}" font-family="${esc(m[3])}"`;
}

export interface SvgPainter extends Painter {
  /** The finished document. */
  toString(): string;
}

export function svgPainter(width: number, height: number, background: string): SvgPainter {
  const out: string[] = [];
  const defs: string[] = [];
  let clips = 0;
  let open = 0;
  out.push(`<rect x="0" y="0" width="${n(width)}" height="${n(height)}" fill="${background}"/>`);
  const painter: SvgPainter = {
    fillRect(color, x, y, w, h, alpha = 1) {
      out.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${color}"${alpha !== 1 ? ` fill-opacity="${alpha}"` : ''}/>`);
    },
    strokeRect(color, width, x, y, w, h) {
      out.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="none" stroke="${color}" stroke-width="${width}"/>`);
    },
    line(color, width, x0, y0, x1, y1, dash = []) {
      out.push(
        `<line x1="${n(x0)}" y1="${n(y0)}" x2="${n(x1)}" y2="${n(y1)}" stroke="${color}" stroke-width="${width}"${dash.length ? ` stroke-dasharray="${dash.join(' ')}"` : ''}/>`,
      );
    },
    text(text, x, y, style) {
      const anchor = style.align === 'center' ? 'middle' : style.align === 'right' ? 'end' : 'start';
      const rotate = style.rotate ? ` transform="rotate(${n((style.rotate * 180) / Math.PI)} ${n(x)} ${n(y)})"` : '';
      out.push(
        `<text x="${n(x)}" y="${n(y)}" fill="${style.color}" ${fontAttrs(style.font)} text-anchor="${anchor}" dominant-baseline="${BASELINE[style.baseline ?? 'alphabetic']}"${rotate}>${esc(text)}</text>`,
      );
    },
    pushClip(x, y, w, h) {
      const id = `clip${clips++}`;
      defs.push(`<clipPath id="${id}"><rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}"/></clipPath>`);
      out.push(`<g clip-path="url(#${id})">`);
      open++;
    },
    popClip() {
      if (open > 0) {
        out.push('</g>');
        open--;
      }
    },
    flush() {},
    toString() {
      return [
        `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="0 0 ${n(width)} ${n(height)}">`,
        `<defs>${defs.join('')}</defs>`,
        ...out,
        '</g>'.repeat(open),
        '</svg>',
      ].join('\n');
    },
  };
  return painter;
}
