// Float64 reference of rmsnorm.wgsl: out (N, C) = x / sqrt(mean(x²) + eps) · weight. It is the family
// reference's RMSNorm (model/family/reference), the layer the kernel computes.

export { rmsnormRef as rmsnormReference } from '../../../model/family/reference';
