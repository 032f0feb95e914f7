// TopK of x viewed as [outer, L, inner] along L: one invocation per element counts the elements of
// its row that come before it in the order (larger first when LARGEST, else smaller first; equal
// values by index; NaN above every number), and when that rank is below k writes itself and its
// index there. Ranks are distinct, so every output slot is written exactly once.
{{X_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding(2) var<storage, read_write> index_buf: array<i32>;

struct TopKParams {
  outer: u32,
  length: u32,
  inner: u32,
  k: u32,
  x_offset: u32,
  values_offset: u32,
  indices_offset: u32,
}
@group(0) @binding(3) var<uniform> params: TopKParams;

fn is_nan(v: f32) -> bool { return !(v == v); }

// True when a (at index ia) comes before b (at index ib).
fn before(a: f32, ia: u32, b: f32, ib: u32) -> bool {
  if (is_nan(a) || is_nan(b)) {
#if LARGEST
    if (is_nan(a) != is_nan(b)) { return is_nan(a); }
#else
    if (is_nan(a) != is_nan(b)) { return is_nan(b); }
#endif
    return ia < ib;
  }
  if (a == b) { return ia < ib; }
#if LARGEST
  return a > b;
#else
  return a < b;
#endif
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let element = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (element >= params.outer * params.length * params.inner) { return; }
  let i = element % params.inner;
  let position = (element / params.inner) % params.length;
  let o = element / (params.inner * params.length);
  let row = o * params.length * params.inner + i;
  let value = load_x(params.x_offset + row + position * params.inner);
  var rank = 0u;
  for (var j = 0u; j < params.length; j = j + 1u) {
    if (before(load_x(params.x_offset + row + j * params.inner), j, value, position)) { rank = rank + 1u; }
  }
  if (rank >= params.k) { return; }
  let out = (o * params.k + rank) * params.inner + i;
  store_y(params.values_offset + out, value);
  index_buf[params.indices_offset + out] = i32(position);
}
