// ONNX GatherND: output element (t, r) = data[batch(t), indices[t, 0..q), r] with the index tuples t
// of `indices` (its last dim is the tuple length q), the b batch dims shared by data and indices
// leading both, and r the position inside the gathered slice (data.shape[b + q:], `inner` elements).
// Negative indices wrap once; anything still out of range is clamped.

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  indices_offset: u32,
  q: u32,
  inner: u32,
  tuples_per_batch: u32,
  batch_stride: u32,  // data elements per batch entry
  _pad0: u32,
  _pad1: u32,
  dims: array<vec4<u32>, 2>,     // data.shape[b + j] for tuple position j
  strides: array<vec4<u32>, 2>,  // its row-major stride in data
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  let tuple = lin / params.inner;
  let r = lin % params.inner;
  var address = (tuple / params.tuples_per_batch) * params.batch_stride + r;
  for (var j = 0u; j < params.q; j = j + 1u) {
    let dim = i32(params.dims[j / 4u][j % 4u]);
    var index = indices[params.indices_offset + tuple * params.q + j];
    if (index < 0) { index = index + dim; }
    index = clamp(index, 0, dim - 1);
    address = address + u32(index) * params.strides[j / 4u][j % 4u];
  }
  return load_bits(params.in_offset + address);
}

#include "layout/store_elements.wgsl"
