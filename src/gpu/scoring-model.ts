// What scoring (score.ts) needs of a model, so one scorer serves GPT-2 (model.ts) and the model
// families (family-model.ts): a forward to the last block's output over a packed batch, and the final
// norm and head over a block of gathered rows.

import type { Gpu } from './runtime/device';
import type { BufferRef, Launch } from './runtime/kernel';
import { createHiddenForward, createLogitsLaunches, type BatchInput, type GpuModel } from './model';

/** A recorded forward over a batch to the last block's output `hidden` (N, C): no logits, no backward. */
export interface HiddenForward {
  N: number;
  hidden: GPUBuffer;
  encode(pass: GPUComputePassEncoder): void;
  destroy(): void;
}

/** The final norm and head over up to B gathered rows, with scratch of its own. */
export interface ScoringHead {
  /** Launches that turn x (n, C) into logits (n, V), n <= B. */
  launches(n: number, b: { x: BufferRef; logits: GPUBuffer }): Launch[];
  destroy(): void;
}

export interface ScoringModel {
  gpu: Gpu;
  C: number; // width of `hidden`
  V: number;
  /** Bytes per row of a forward-only batch's activations. */
  rowBytes: number;
  /** Floats per row of the widest activation that binds whole over a batch's rows. */
  widestRow: number;
  hiddenForward(batch: BatchInput): HiddenForward;
  head(B: number): ScoringHead;
}

/** GPT-2: two layers' activations (createHiddenForward), ln_f and the tied head. */
export function gpt2Scoring(model: GpuModel): ScoringModel {
  const { nEmbd: C, nHead: NH, nLayer: L, vocabSize: V } = model.config;
  const { device } = model.gpu;
  return {
    gpu: model.gpu,
    C,
    V,
    rowBytes: (Math.min(L, 2) * (14 * C + NH + 4) + C) * 4,
    widestRow: 4 * C, // the MLP's (rows, 4C)
    hiddenForward: (batch) => createHiddenForward(model, batch),
    head(B) {
      const storage = (name: string, floats: number) =>
        device.createBuffer({ label: `Score.${name}`, size: Math.max(16, floats * 4), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      const lnf = storage('lnf', B * C);
      const mean = storage('lnfMean', B);
      const rstd = storage('lnfRstd', B);
      return {
        launches: (n, b) => createLogitsLaunches(model, n, { x: b.x, lnf, mean, rstd, logits: b.logits }),
        destroy() {
          lnf.destroy();
          mean.destroy();
          rstd.destroy();
        },
      };
    },
  };
}
