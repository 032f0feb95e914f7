// ONNX ScatterElements as a gather over the updates, so no two invocations write one element and
// every reduction works without atomics: output element c starts from data[c] and folds in, in
// index order, each update u[c'] whose c' equals c off the axis and whose index (negative wrapped
// once) equals c[axis]. Cost: indices.shape[axis] reads per output element.
{{DATA_ACCESS}}
{{UPDATES_ACCESS}}
{{OUT_ACCESS}}
@group(0) @binding(3) var<storage, read> indices: array<i32>;

struct Params {
  count: u32,
  rank: u32,
  axis: u32,
  axis_dim: i32,      // data.shape[axis]
  index_axis: u32,    // indices.shape[axis]
  data_offset: u32,
  updates_offset: u32,
  out_offset: u32,
  indices_offset: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
  out_shape: array<vec4<u32>, 2>,      // dim d at [d / 4][d % 4]
  index_shape: array<vec4<u32>, 2>,
  index_strides: array<vec4<u32>, 2>,  // row-major strides of indices (= of updates)
}
@group(0) @binding(4) var<uniform> params: Params;

fn combine(a: f32, b: f32) -> f32 { return {{COMBINE}}; }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let lin = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (lin >= params.count) { return; }
  var v = load_data(params.data_offset + lin);
  // The updates row that can reach this element: same coordinates off the axis, inside indices.
  var rest = lin;
  var base = 0u;
  var inside = true;
  var hit_index = 0;
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let c = rest % params.out_shape[d / 4][d % 4];
    rest = rest / params.out_shape[d / 4][d % 4];
    if (u32(d) == params.axis) {
      hit_index = i32(c);
    } else {
      inside = inside && c < params.index_shape[d / 4][d % 4];
      base = base + c * params.index_strides[d / 4][d % 4];
    }
  }
  if (inside) {
    let step = params.index_strides[params.axis / 4u][params.axis % 4u];
    for (var k = 0u; k < params.index_axis; k = k + 1u) {
      var index = indices[params.indices_offset + base + k * step];
      if (index < 0) { index = index + params.axis_dim; }
      if (index == hit_index) { v = combine(v, load_updates(params.updates_offset + base + k * step)); }
    }
  }
  store_out(params.out_offset + lin, v);
}
