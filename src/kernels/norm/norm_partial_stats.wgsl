// Pass 1 of the long-row normalization: workgroup (row, chunk) computes (count, mean, M2) of its
// chunk. Each invocation sums deviations from its own first element (a sample of the same data, so
// no cancellation), converts to (n, mean, M2) and the workgroup merges with Chan's formula.
// Loads come in batches of BATCH independent ones per invocation: one load in flight per invocation
// (a loop that adds each value before loading the next) leaves the memory bus half idle.
#include "norm/norm_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read_write> partials: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: NormParams;

const BATCH = 16u;

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
  var shift = 0.0;
  if (begin + lid < end) { shift = load_x(base + begin + lid); }
  var s1 = 0.0;
  var s2 = 0.0;
  for (var k0 = begin + lid; k0 < end; k0 = k0 + 256u * BATCH) {
    var d: array<f32, BATCH>;
    for (var j = 0u; j < BATCH; j = j + 1u) {
      d[j] = 0.0;
      if (k0 + j * 256u < end) { d[j] = load_x(base + k0 + j * 256u) - shift; }
    }
    for (var j = 0u; j < BATCH; j = j + 1u) {
      s1 = s1 + d[j];
      s2 = s2 + d[j] * d[j];
    }
  }
  var n = 0.0;
  if (begin + lid < end) { n = f32((end - begin - lid + 255u) / 256u); }
  var mine = vec4<f32>(0.0);
  if (n > 0.0) { mine = vec4<f32>(n, shift + s1 / n, max(s2 - s1 * s1 / n, 0.0), 0.0); }
  workgroup_merge(lid, mine);
  if (lid == 0u) { partials[group] = shared_stats[0]; }
}
