// Softmax / LogSoftmax of x viewed as [outer, K, inner] along K. Reads x twice, writes once.
//   INNER_ONE: one workgroup per row; each invocation keeps an online (max, sum of exp) pair
//     (Milakov & Gimelshein's online softmax), the workgroup merges the pairs, then writes.
//   otherwise: one invocation per (outer, inner) column.
#include "softmax/softmax_params.wgsl"

// (max, sum of exp(x - max)) of the union of two sets.
fn merge(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  let m = max(a.x, b.x);
  if (m == -0x1.fffffep+127) { return vec2<f32>(m, 0.0); }
  return vec2<f32>(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

fn result(x: f32, stats: vec2<f32>) -> f32 {
#if LOG_SOFTMAX
  return x - stats.x - log(stats.y);
#else
  return exp(x - stats.x) / stats.y;
#endif
}

var<workgroup> shared_pairs: array<vec2<f32>, 256>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let group = wg.y * nwg.x + wg.x;
#if INNER_ONE
  if (group >= params.outer) { return; }  // uniform per workgroup
  let base = group * params.size;
  var mine = vec2<f32>(-0x1.fffffep+127, 0.0);
  for (var k = lid; k < params.size; k = k + 256u) {
    mine = merge(mine, vec2<f32>(load_x(params.x_offset + base + k), 1.0));
  }
  shared_pairs[lid] = mine;
  workgroupBarrier();
  for (var stride = 128u; stride > 0u; stride = stride / 2u) {
    if (lid < stride) { shared_pairs[lid] = merge(shared_pairs[lid], shared_pairs[lid + stride]); }
    workgroupBarrier();
  }
  let stats = shared_pairs[0];
  for (var k = lid; k < params.size; k = k + 256u) {
    store_y(params.y_offset + base + k, result(load_x(params.x_offset + base + k), stats));
  }
#else
  let column = group * 256u + lid;
  if (column >= params.outer * params.inner) { return; }
  let base = (column / params.inner) * params.size * params.inner + column % params.inner;
  var stats = vec2<f32>(-0x1.fffffep+127, 0.0);
  for (var k = 0u; k < params.size; k = k + 1u) {
    stats = merge(stats, vec2<f32>(load_x(params.x_offset + base + k * params.inner), 1.0));
  }
  for (var k = 0u; k < params.size; k = k + 1u) {
    let i = base + k * params.inner;
    store_y(params.y_offset + i, result(load_x(params.x_offset + i), stats));
  }
#endif
}
