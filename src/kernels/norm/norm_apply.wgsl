// Pass 2 of the long-row normalization: y = (x - mean[r]) * rstd[r] * scale[a] + bias[a] (then PRelu
// by slope[a] where fused). Workgroup (row, block) first merges the row's chunk statistics (at most
// 256, one per invocation: no separate finalize dispatch), then normalizes PER_THREAD elements per
// invocation, 256 apart, loaded before any is stored.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> partials: array<vec4<f32>>;
{{SCALE_ACCESS}}
{{BIAS_ACCESS}}
{{SLOPE_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: NormParams;

const PER_THREAD = {{PER_THREAD}}u;

// Elementwise ops fused after the normalization (kernels/elementwise/fused_elementwise.h).
{{EPILOGUE}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.rows * params.blocks) { return; }  // uniform per workgroup
  let r = group / params.blocks;
  let block = group % params.blocks;
  var mine = vec4<f32>(0.0);
  if (lid < params.chunks) { mine = partials[r * params.chunks + lid]; }
  workgroup_merge(lid, mine);
  let total = shared_stats[0];
#if L2
  // x / max(||x||, epsilon): the sum of squares from (count, mean, M2), no centering.
  let mean = 0.0;
  let rstd = 1.0 / max(sqrt(total.z + total.x * total.y * total.y), params.epsilon);
#else
  let mean = total.y;
  let rstd = inverseSqrt(total.z / max(total.x, 1.0) + params.epsilon);
#endif
  let base = r * params.row_size;
  let first = block * 256u * PER_THREAD + lid;
  var values: array<f32, PER_THREAD>;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = first + j * 256u;
    values[j] = 0.0;
    if (k < params.row_size) { values[j] = load_x(params.x_offset + base + k); }
  }
  var walk = affine_walk(r, first);
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let k = first + j * 256u;
    if (j > 0u) { walk = affine_step(walk, 256u, r, k); }
    if (k < params.row_size) {
      let a = affine_at(walk, r, k);
      var v = (values[j] - mean) * rstd;
#if HAS_SCALE
      v = v * load_scale(params.scale_offset + a);
#endif
#if HAS_BIAS
      v = v + load_bias(params.bias_offset + a);
#endif
#if HAS_SLOPE
      v = select(v * load_slope(params.slope_offset + a), v, v >= 0.0);
#endif
      store_y(params.y_offset + base + k, epilogue(v));
    }
  }
}
