// The split-K implicit GEMM's second pass: y[i] = act(bias[co] + sum over slices s of part[s, i]),
// part holding each slice's partial sums over its range of input-channel chunks (f32,
// [splits, N, C_out, P], from element offsets.x). tap_step.w = splits; region.y = P; dilation.w = N C_out P.
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
@group(0) @binding(0) var<storage, read> part: array<f32>;
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = invocation(wg, nwg, lid);
  let total = params.dilation.w;
  if (idx >= total) { return; }
  var v = 0.0;
  for (var s = 0u; s < params.tap_step.w; s++) { v += part[params.offsets.x + s * total + idx]; }
#if HAS_BIAS
  v += load_bias(params.offsets.z + (idx / params.region.y) % params.out_size.w);
#endif
  store_y(params.offsets.w + idx, activate(v));
}
