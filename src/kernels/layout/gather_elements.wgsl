// ONNX GatherElements: out[c] = data[c with c[axis] replaced by indices[c]], the output having the
// indices' shape (rank <= 8). Negative indices wrap once; anything still out of range is clamped
// (ONNX leaves it undefined; the host rejects it first when it knows the indices).

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  indices_offset: u32,
  axis_dim: i32,
  rank: u32,
  axis: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
  out_shape: array<vec4<u32>, 2>,    // dim d at [d / 4][d % 4]
  data_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  var index = indices[params.indices_offset + lin];
  if (index < 0) { index = index + params.axis_dim; }
  index = clamp(index, 0, params.axis_dim - 1);
  var rest = lin;
  var address = 0u;
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let size = params.out_shape[d / 4][d % 4];
    var c = rest % size;
    rest = rest / size;
    if (u32(d) == params.axis) { c = u32(index); }
    address = address + c * params.data_strides[d / 4][d % 4];
  }
  return load_bits(params.in_offset + address);
}

#include "layout/store_elements.wgsl"
