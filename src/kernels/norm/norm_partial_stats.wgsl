// Pass 1 of the large-row normalization: workgroup (row, chunk) computes (count, mean, M2) of its
// chunk. Each invocation sums deviations from its own first element (a sample of the same data, so
// no cancellation), converts to (n, mean, M2) and the workgroup merges with Chan's formula.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: NormParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.rows * params.chunks) { return; }  // uniform per workgroup
  let r = group / params.chunks;
  let chunk = group % params.chunks;
  let begin = chunk * params.chunk_size;
  let end = min(begin + params.chunk_size, params.row_size);
  let base = params.x_offset + r * params.row_size;
  var n = 0.0;
  var shift = 0.0;
  var s1 = 0.0;
  var s2 = 0.0;
  if (begin + lid < end) { shift = load_x(base + begin + lid); }
  for (var k = begin + lid; k < end; k = k + 256u) {
    let d = load_x(base + k) - shift;
    s1 = s1 + d;
    s2 = s2 + d * d;
    n = n + 1.0;
  }
  var mine = vec4<f32>(0.0);
  if (n > 0.0) { mine = vec4<f32>(n, shift + s1 / n, max(s2 - s1 * s1 / n, 0.0), 0.0); }
  workgroup_merge(lid, mine);
  if (lid == 0u) { partials[group] = shared_stats[0]; }
}
