// y = rotate_half(x) along the last axis of length 2h: y[.., j] = -x[.., j + h] for j < h and
// x[.., j - h] after, the "rotate half" of rotary position embeddings (h = 1: the interleaved pairs
// (-x1, x0) that BS-RoFormer's rotary-embedding-torch exports as Split, Neg and Concat). One
// invocation per output element.
{{X_ACCESS}}
{{Y_ACCESS}}

struct Params {
  count: u32,     // elements
  last: u32,      // length of the last axis, 2h
  half: u32,      // h
  x_offset: u32,  // in elements
  y_offset: u32,
}
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let i = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (i >= params.count) { return; }
  let j = i % params.last;
  var v: f32;
  if (j < params.half) {
    v = -load_x(params.x_offset + i + params.half);
  } else {
    v = load_x(params.x_offset + i - params.half);
  }
  store_y(params.y_offset + i, v);
}
