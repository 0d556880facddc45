// For the family model's GPU test: tiny random model folders in each family's layout (tensors as a
// folder stores them, from a seeded stream) and the family's float64 reference over such a folder,
// giving the log-probabilities of a packed tree batch's targets.

import type { FamilyConfig, FolderTensor, FolderTensorSource, WeightDtype } from '../model/family/config';
import { familyReferenceLogprobs } from '../model/family/reference';
import { createRng } from '../util/prng';
import { familyTensorShapes } from './family-model';
import { decodeWeights, encodeWeights } from './kernels/weight-format/weight-format';

/**
 * Every tensor of `config`'s folder in `dtype`, in name order (as safetensors writes them): norms near
 * 1, biases near 0, matrices uniform with a 1/sqrt(fan-in) scale so activations stay of order 1.
 */
export function randomFamilyFolder(config: FamilyConfig, dtype: WeightDtype, seed: number): FolderTensor[] {
  const rng = createRng(seed);
  const shapes = [...familyTensorShapes(config)].sort(([a], [b]) => (a < b ? -1 : 1));
  return shapes.map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    const isBias = name.endsWith('.bias');
    const scale = isNorm ? 0.3 : isBias ? 0.3 : name.includes('embed_tokens') ? 1 : 2 / Math.sqrt(shape[shape.length - 1]);
    const values = Array.from({ length: n }, () => (isNorm ? 1 : 0) + (rng.next() * 2 - 1) * scale);
    return { name, dtype, shape, data: encodeWeights(dtype, values) };
  });
}

/** The folder's tensors as a stream, one at a time. */
export function folderSource(tensors: readonly FolderTensor[]): FolderTensorSource {
  return {
    totalBytes: tensors.reduce((n, t) => n + t.data.byteLength, 0),
    async *tensors() {
      for (const t of tensors) yield t;
    },
  };
}

export interface ReferenceBatch {
  tokens: ArrayLike<number>;
  positions: ArrayLike<number>;
  end: ArrayLike<number>;
  targets: readonly { predictor: number; token: number }[];
}

/**
 * The family's float64 reference (model/family/reference) over a packed batch, with the folder's weights
 * as the GPU decodes them: each target's log-probability.
 */
export function folderReferenceLogprobs(config: FamilyConfig, folder: readonly FolderTensor[], batch: ReferenceBatch): Float64Array {
  const tensors = new Map(folder.map((t) => [t.name, decodeWeights(t.dtype, t.data)]));
  return familyReferenceLogprobs({ config, tensors }, batch, batch.targets);
}
