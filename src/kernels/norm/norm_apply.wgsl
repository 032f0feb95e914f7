// Pass 3 of the large-row normalization: y = (x - mean[r]) * rstd[r] * scale[a] + bias[a], four
// consecutive elements per invocation.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> row_stats: array<vec2<f32>>;
{{SCALE_ACCESS}}
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: NormParams;

// Elementwise ops fused after the normalization (kernels/elementwise/fused_elementwise.h).
{{EPILOGUE}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first = ((wg.y * nwg.x + wg.x) * 256u + lid) * 4u;
  let total = params.rows * params.row_size;
  for (var i = first; i < min(first + 4u, total); i = i + 1u) {
    let r = i / params.row_size;
    let k = i % params.row_size;
    let stats = row_stats[r];
    var v = (load_x(params.x_offset + i) - stats.x) * stats.y;
#if HAS_SCALE
    v = v * load_scale(params.scale_offset + affine_index(r, k));
#endif
#if HAS_BIAS
    v = v + load_bias(params.bias_offset + affine_index(r, k));
#endif
    store_y(params.y_offset + i, epilogue(v));
  }
}
