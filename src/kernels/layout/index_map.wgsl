// Index-map copy: out[region(c)] = in[map(c)] for every coordinate c of an output region, where per
// dim d the input coordinate is x = start[d] + c[d] * step[d], then handled at the input's edge by
// the BOUNDARY mode (ONNX Pad modes; WRAP also serves Tile). Transpose, Slice, Split, Concat,
// Expand, Tile and Pad are all this one gather with different per-dim (start, step, stride) tables,
// planned and coalesced on the host (index_map.cpp). Moves raw bits: see store_elements.wgsl.

struct Params {
  threads: u32,
  words_per_row: u32,                 // HALF: output words per row of the region
  run_length: u32,                    // elements per row (innermost dims contiguous in the output)
  rank: u32,
  out_offset: u32,                    // output element of region coordinate 0
  in_offset: i32,                     // input element of input coordinate 0
  pad_bits: u32,                      // CONSTANT: the value's bits
  _pad: u32,
  shape: array<vec4<u32>, 2>,         // region shape, dim d at [d / 4][d % 4]
  out_strides: array<vec4<u32>, 2>,
  start: array<vec4<i32>, 2>,
  step: array<vec4<i32>, 2>,
  in_dim: array<vec4<i32>, 2>,        // input extent (boundary modes)
  in_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn out_address(lin: u32) -> u32 {
  var rest = lin;
  var a = params.out_offset;
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let size = params.shape[d / 4][d % 4];
    a = a + (rest % size) * params.out_strides[d / 4][d % 4];
    rest = rest / size;
  }
  return a;
}

fn source_bits(lin: u32) -> u32 {
  var rest = lin;
  var a = params.in_offset;
  for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
    let size = params.shape[d / 4][d % 4];
    var x = params.start[d / 4][d % 4] + i32(rest % size) * params.step[d / 4][d % 4];
    rest = rest / size;
    let n = params.in_dim[d / 4][d % 4];
#if BOUNDARY_CONSTANT
    if (x < 0 || x >= n) { return params.pad_bits; }
#endif
#if BOUNDARY_EDGE
    x = clamp(x, 0, n - 1);
#endif
#if BOUNDARY_WRAP
    x = ((x % n) + n) % n;
#endif
#if BOUNDARY_REFLECT
    // numpy/ONNX 'reflect' (edge not repeated): period 2(n-1), folded back into [0, n).
    let period = max(2 * (n - 1), 1);
    x = ((x % period) + period) % period;
    if (x >= n) { x = period - x; }
#endif
    a = a + x * params.in_strides[d / 4][d % 4];
  }
  return load_bits(u32(a));
}

#include "layout/store_elements.wgsl"
