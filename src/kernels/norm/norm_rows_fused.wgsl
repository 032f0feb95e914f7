// Normalization of rows that fit in one workgroup's registers (row_size <= 256 * PER_THREAD): one
// workgroup per row reads the row once, computes the exact two-pass mean and variance from
// registers, and writes the normalized row.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
{{SCALE_ACCESS}}
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: NormParams;

const PER_THREAD = {{PER_THREAD}}u;
var<workgroup> partial_sums: array<f32, 256>;

fn workgroup_sum(lid: u32, value: f32) -> f32 {
  partial_sums[lid] = value;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { partial_sums[lid] = partial_sums[lid] + partial_sums[lid + stride]; }
    workgroupBarrier();
  }
  let total = partial_sums[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let r = wg.y * nwg.x + wg.x;
  if (r >= params.rows) { return; }  // uniform per workgroup
  let base = r * params.row_size;
  var values: array<f32, PER_THREAD>;
  var sum = 0.0;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lid + j * 256u;
    values[j] = 0.0;
    if (k < params.row_size) { values[j] = load_x(params.x_offset + base + k); }
    sum = sum + values[j];
  }
  let mean = workgroup_sum(lid, sum) / f32(params.row_size);
  var squares = 0.0;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lid + j * 256u;
    if (k < params.row_size) { squares = squares + (values[j] - mean) * (values[j] - mean); }
  }
  let rstd = inverseSqrt(workgroup_sum(lid, squares) / f32(params.row_size) + params.epsilon);
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = lid + j * 256u;
    if (k < params.row_size) {
      var v = (values[j] - mean) * rstd;
#if HAS_SCALE
      v = v * load_scale(params.scale_offset + affine_index(r, k));
#endif
#if HAS_BIAS
      v = v + load_bias(params.bias_offset + affine_index(r, k));
#endif
      store_y(params.y_offset + base + k, v);
    }
  }
}
