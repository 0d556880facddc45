// Backward of matmul.ts's y = x·W + bias [-> GELU]: dx = dPre·Wᵀ, dW = xᵀ·dPre, dbias = Σ_rows dPre,
// where dPre = dY·gelu'(pre) with a fused GELU, else dY. The column kernel of matmul-backward.wgsl
// makes dPre and dbias; the two products run on matmul.wgsl with its transposed operands.
// Reference: matmulBackwardRef in matmul-backward.reference.ts beside it; src/model/reference/model.ts composes it into the float64 GPT-2.

import code from './matmul-backward.wgsl?raw';
import geluMath from '../common/gelu-math.wgsl?raw';
import { uploadUniform } from '../../runtime/buffers';
import { bindBuffers, checkLength, unusedBinding, type Launch, type BufferRef } from '../../runtime/kernel';
import { createMatmul, type MatmulShape, type MatmulVariant } from '../matmul/matmul';
import { computePipeline, groups1d } from '../../runtime/pipeline';

const WG = 64;

/** Mirror of `struct Params` in matmul-backward.wgsl: M: u32 @ 0, N: u32 @ 4. */
export function matmulBackwardParams(M: number, N: number): ArrayBuffer {
  const bytes = new ArrayBuffer(16);
  const view = new DataView(bytes);
  view.setUint32(0, M, true);
  view.setUint32(4, N, true);
  return bytes;
}

export interface MatmulBackwardBuffers {
  x: BufferRef; // (M, K): the forward's input
  w: BufferRef; // (K, N), or (N, K) with transB
  dY: BufferRef; // (M, N): gradient of the forward's output (of the GELU's output, with pre)
  /** (M, N): the GELU's input, saved by the forward's `pre`; with it dY is taken back through the GELU. */
  pre?: BufferRef;
  /** (M, N): scratch for dY·gelu'(pre); required with pre. */
  dPre?: BufferRef;
  dx?: BufferRef; // (M, K)
  dw?: BufferRef; // shaped like w
  dbias?: BufferRef; // (N)
}

export interface MatmulBackwardOptions {
  /** The forward used W stored (N, K) (the tied head): dw is (N, K) too. */
  transB?: boolean;
  /** dx += (the residual stream's gradient). */
  accumulateDx?: boolean;
  /** dw += and dbias += (gradients summed over micro-batches, or wte's two uses). */
  accumulateParams?: boolean;
  variant?: MatmulVariant;
}

/** Launches in order: [column kernel (dPre, dbias)], [dx], [dw]; encode them into one pass, in order. */
export function createMatmulBackward(device: GPUDevice, shape: MatmulShape, b: MatmulBackwardBuffers, options: MatmulBackwardOptions = {}): Launch[] {
  const { M, K, N } = shape;
  if (!!b.pre !== !!b.dPre) throw new Error('matmul backward: pre and dPre come together (a fused GELU)');
  checkLength(b.x, M * K, 'x');
  checkLength(b.w, K * N, 'w');
  checkLength(b.dY, M * N, 'dY');
  const launches: Launch[] = [];
  if (b.pre || b.dbias) {
    const gelu = !!b.pre;
    if (b.pre) checkLength(b.pre, M * N, 'pre');
    if (b.dPre) checkLength(b.dPre, M * N, 'dPre');
    if (b.dbias) checkLength(b.dbias, N, 'dbias');
    const constants = { WG, GELU: Number(gelu), HAS_BIAS: Number(!!b.dbias), ACCUMULATE: Number(!!options.accumulateParams) };
    const pipeline = computePipeline(device, 'matmulBackward', geluMath + code, constants);
    const params = uploadUniform(device, 'matmulBackward.params', matmulBackwardParams(M, N));
    // At most one of dPre and dbias is unused here, so the one unused write buffer is bound once.
    const group = bindBuffers(device, 'matmulBackward.bindGroup', pipeline, {
      0: params,
      1: b.dY,
      2: b.pre ?? unusedBinding(device, 'read'),
      3: b.dPre ?? unusedBinding(device, 'write'),
      4: b.dbias ?? unusedBinding(device, 'write'),
    });
    const [gx, gy] = groups1d(N, WG);
    launches.push({ label: 'matmulBackward', pipeline, group, workgroups: N === 0 ? [0, 0, 0] : [gx, gy, 1], uniforms: [params] });
  }
  const dG = b.dPre ?? b.dY; // (M, N)
  const variant = options.variant;
  if (b.dx) {
    // dx (M, K) = dG (M, N) · Wᵀ: W (K, N) read as stored (N', K') = (K, N), or W (N, K) read as is.
    launches.push(createMatmul(device, { M, K: N, N: K }, { x: dG, w: b.w, y: b.dx }, { transB: !options.transB, accumulate: options.accumulateDx, variant }));
  }
  if (b.dw) {
    checkLength(b.dw, K * N, 'dw');
    launches.push(
      options.transB
        ? // dw (N, K) = dGᵀ (N, M) · x (M, K)
          createMatmul(device, { M: N, K: M, N: K }, { x: dG, w: b.x, y: b.dw }, { transA: true, accumulate: options.accumulateParams, variant })
        : // dw (K, N) = xᵀ (K, M) · dG (M, N)
          createMatmul(device, { M: K, K: M, N }, { x: b.x, w: dG, y: b.dw }, { transA: true, accumulate: options.accumulateParams, variant }),
    );
  }
  return launches;
}
