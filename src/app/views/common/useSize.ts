// The content-box size of an element, kept current by a ResizeObserver; a canvas sized to it, and
// drawn at most once per animation frame.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';

export function useSize(ref: RefObject<HTMLElement | null>): { width: number; height: number } {
  const [size, setSize] = useState({ width: 0, height: 0 });
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const update = () => {
      const r = el.getBoundingClientRect();
      setSize((s) => (s.width === Math.floor(r.width) && s.height === Math.floor(r.height) ? s : { width: Math.floor(r.width), height: Math.floor(r.height) }));
    };
    update();
    const observer = new ResizeObserver(update);
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return size;
}

/**
 * Sizes a canvas's backing store to `width` × `height` CSS pixels at the device pixel ratio (only
 * when it changed: resizing clears it) and returns its 2D context drawing in CSS pixels.
 */
export function sizedContext(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
  }
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  return ctx;
}

/**
 * Coalesces drawing to one `draw(canvas, width, height)` per animation frame, with the latest `draw`
 * and size of the render before it; returns the stable function that asks for a frame.
 */
export function useFrameDraw(
  canvasRef: RefObject<HTMLCanvasElement | null>,
  size: { width: number; height: number },
  draw: (canvas: HTMLCanvasElement, width: number, height: number) => void,
): () => void {
  const latest = useRef({ draw, size });
  latest.current = { draw, size };
  const pending = useRef(0);
  // Cancelled frames are forgotten, or a remount (React's StrictMode mounts twice in development)
  // would wait forever for a frame that never comes.
  useEffect(
    () => () => {
      cancelAnimationFrame(pending.current);
      pending.current = 0;
    },
    [],
  );
  return useCallback(() => {
    pending.current ||= requestAnimationFrame(() => {
      pending.current = 0;
      const { draw, size } = latest.current;
      if (canvasRef.current) draw(canvasRef.current, size.width, size.height);
    });
  }, [canvasRef]);
}
