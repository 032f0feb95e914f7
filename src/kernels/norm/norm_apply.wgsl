// Pass 3 of the large-row normalization: y = (x - mean[r]) * rstd[r] * scale[a] + bias[a] (then PRelu
// by slope[a] where fused), four consecutive elements per invocation.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> row_stats: array<vec2<f32>>;
{{SCALE_ACCESS}}
{{BIAS_ACCESS}}
{{SLOPE_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: NormParams;

// Elementwise ops fused after the normalization (kernels/elementwise/fused_elementwise.h).
{{EPILOGUE}}

// Where element i is: its row r and place k in it, and the affine index's parts (element (r, k)
// takes scale / bias (r % row_mod) * row_mul + channel, channel = (k / k_div) % k_mod, `within` =
// k % k_div). Found by division once per invocation and stepped after that (step below).
struct Place {
  r: u32,
  k: u32,
  row_part: u32,
  channel: u32,
  within: u32,
}

fn locate(i: u32) -> Place {
  let r = i / params.row_size;
  let k = i - r * params.row_size;
  let q = k / params.k_div;
  return Place(r, k, (r % params.row_mod) * params.row_mul, q % params.k_mod, k - q * params.k_div);
}

// The place of element i + 1 (`next`, the index of that element).
fn step(p: Place, next: u32) -> Place {
  if (p.k + 1u == params.row_size) { return locate(next); }  // a new row: rare, rows here exceed 4096
  var q = p;
  q.k = p.k + 1u;
  q.within = p.within + 1u;
  if (q.within == params.k_div) {  // (k / k_div stays below k_mod within a row: the plan checks it)
    q.within = 0u;
    q.channel = p.channel + 1u;
  }
  return q;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first = ((wg.y * nwg.x + wg.x) * 256u + lid) * 4u;
  let total = params.rows * params.row_size;
  if (first >= total) { return; }
  var p = locate(first);
  for (var i = first; i < min(first + 4u, total); i = i + 1u) {
    if (i != first) { p = step(p, i); }
    let stats = row_stats[p.r];
    var v = (load_x(params.x_offset + i) - stats.x) * stats.y;
#if HAS_SCALE
    v = v * load_scale(params.scale_offset + p.row_part + p.channel);
#endif
#if HAS_BIAS
    v = v + load_bias(params.bias_offset + p.row_part + p.channel);
#endif
#if HAS_SLOPE
    v = select(v * load_slope(params.slope_offset + p.row_part + p.channel), v, v >= 0.0);
#endif
    store_y(params.y_offset + i, epilogue(v));
  }
}
