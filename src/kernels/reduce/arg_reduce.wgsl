// ArgMax / ArgMin of x viewed as [outer, R, inner] over R: one invocation per (outer, inner) column
// walks R (coalesced across neighbouring columns) and writes the index as i32 (int64 tensors live
// as i32 on the GPU). Ties keep the first index, or the last with LAST_INDEX; a NaN wins (numpy).
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read_write> y_buf: array<i32>;

struct ArgParams {
  outer: u32,
  reduce: u32,
  inner: u32,
  x_offset: u32,
  y_offset: u32,
}
@group(0) @binding(2) var<uniform> params: ArgParams;

fn better(candidate: f32, best: f32) -> bool {
  if (candidate != candidate) { return best == best; }  // first NaN wins
  if (best != best) { return false; }
#if LAST_INDEX
  return candidate {{COMPARE}}= best;
#else
  return candidate {{COMPARE}} best;
#endif
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let column = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (column >= params.outer * params.inner) { return; }
  let o = column / params.inner;
  let i = column % params.inner;
  let base = params.x_offset + o * params.reduce * params.inner + i;
  var best = load_x(base);
  var best_index = 0u;
  for (var k = 1u; k < params.reduce; k = k + 1u) {
    let v = load_x(base + k * params.inner);
    if (better(v, best)) {
      best = v;
      best_index = k;
    }
  }
  y_buf[params.y_offset + column] = i32(best_index);
}
