// ONNX Gather: out[o, k, i] = data[o, indices[k], i] with the data viewed as [outer, axis_dim,
// inner] and the indices flattened to K. Negative indices wrap once (ONNX); anything still out of
// range is clamped on the GPU (the host rejects it first when it knows the indices).

struct Params {
  threads: u32,
  words_per_row: u32,
  run_length: u32,
  out_offset: u32,
  in_offset: u32,
  indices_offset: u32,
  axis_dim: i32,
  count_k: u32,
  inner: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
@group(0) @binding(2) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

fn out_address(lin: u32) -> u32 { return params.out_offset + lin; }

fn source_bits(lin: u32) -> u32 {
  let i = lin % params.inner;
  let k = (lin / params.inner) % params.count_k;
  let o = lin / (params.inner * params.count_k);
  var index = indices[params.indices_offset + k];
  if (index < 0) { index = index + params.axis_dim; }
  index = clamp(index, 0, params.axis_dim - 1);
  return load_bits(params.in_offset + (o * u32(params.axis_dim) + u32(index)) * params.inner + i);
}

#include "layout/store_elements.wgsl"
