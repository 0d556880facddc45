// Float64 reference of linear.wgsl: y (M, N) = x (M, K) · Wᵀ + bias, W (N, K) as Hugging Face stores it.
// It is the family reference's linear (model/family/reference), the layer the kernel computes.

export { linearRef as linearReference } from '../../../model/family/reference';
