// Workgroup reductions shared by the kernels that reduce a row across a workgroup (loss_grad,
// kl_sdcc, attention_decode): the host prepends this file to their code. One value per invocation
// in, the reduction of all WG of them out to every invocation. WG (the kernel's override) must be a
// power of two; every invocation of the workgroup must call, in uniform control flow.

var<workgroup> scratch: array<f32, WG>;

fn reduceMax(x: f32, lid: u32) -> f32 {
  scratch[lid] = x;
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    workgroupBarrier();
    if (lid < s) {
      scratch[lid] = max(scratch[lid], scratch[lid + s]);
    }
  }
  workgroupBarrier();
  let result = scratch[0];
  workgroupBarrier(); // everyone has read scratch[0] before it is reused
  return result;
}

fn reduceSum(x: f32, lid: u32) -> f32 {
  scratch[lid] = x;
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    workgroupBarrier();
    if (lid < s) {
      scratch[lid] = scratch[lid] + scratch[lid + s];
    }
  }
  workgroupBarrier();
  let result = scratch[0];
  workgroupBarrier();
  return result;
}
