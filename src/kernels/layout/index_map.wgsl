// Index-map copy: out[region(c)] = in[map(c)] for every coordinate c of an output region, where per
// dim d the input coordinate is x = start[d] + c[d] * step[d], then handled at the input's edge by
// the BOUNDARY mode (ONNX Pad modes; WRAP also serves Tile). Transpose, Slice, Split, Concat,
// Expand, Tile and Pad are all this one gather with different per-dim (start, step, stride) tables,
// planned and coalesced on the host (index_map.cpp). Moves raw bits, so every dtype is exact.
//
// The region is walked as rows: the trailing `row_rank` dims. Each invocation decomposes its row
// index over the outer dims once (the integer divisions are what costs on a GPU), then moves
// several elements of the row:
// - 32-bit dtypes: row = the innermost dim, 4 elements per invocation (strided by a quarter row).
// - HALF (f16, two per word): row = the trailing dims that are contiguous in the output; each
//   invocation owns one whole output word, so no two invocations write the same word. Rows never
//   share a word (between rows there is a gap of >= 1 element); a word only partly covered by its
//   row keeps its other half (read-modify-write by the owner).

struct Params {
  threads: u32,
  chunks_per_row: u32,                // invocations per row
  row_length: u32,                    // elements per row
  rank: u32,
  row_rank: u32,
  out_offset: u32,                    // output element of region coordinate 0
  in_offset: i32,                     // input element of input coordinate 0
  pad_bits: u32,                      // CONSTANT: the value's bits (f16: low 16)
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

#include "layout/load_bits.wgsl"

// Input element offset of coordinate c along dim d; clears `inside` where CONSTANT pads it.
fn dim_offset(d: i32, c: u32, inside: ptr<function, bool>) -> i32 {
  var x = params.start[d / 4][d % 4] + i32(c) * params.step[d / 4][d % 4];
  let n = params.in_dim[d / 4][d % 4];
#if BOUNDARY_CONSTANT
  if (x < 0 || x >= n) { *inside = false; }
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
  return x * params.in_strides[d / 4][d % 4];
}

// Element p of a row: (output offset within the row, bits).
fn row_element(p: u32, in_base: i32, row_inside: bool) -> vec2<u32> {
  var rest = p;
  var o = 0u;
  var a = in_base;
  var inside = row_inside;
  let first = i32(params.rank - params.row_rank);
  for (var d = i32(params.rank) - 1; d >= first; d = d - 1) {
    let size = params.shape[d / 4][d % 4];
    var c = rest;  // the outermost row dim takes the rest (p < row_length): no division
    if (d > first) {
      c = rest % size;
      rest = rest / size;
    }
    o = o + c * params.out_strides[d / 4][d % 4];
    a = a + dim_offset(d, c, &inside);
  }
  if (!inside) { return vec2<u32>(o, params.pad_bits); }
  return vec2<u32>(o, load_bits(u32(a)));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (t >= params.threads) { return; }
  let row = t / params.chunks_per_row;
  let j = t % params.chunks_per_row;
  var rest = row;
  var out_base = params.out_offset;
  var in_base = params.in_offset;
  var inside = true;
  for (var d = i32(params.rank - params.row_rank) - 1; d >= 0; d = d - 1) {
    let size = params.shape[d / 4][d % 4];
    let c = rest % size;
    rest = rest / size;
    out_base = out_base + c * params.out_strides[d / 4][d % 4];
    in_base = in_base + dim_offset(d, c, &inside);
  }
#if HALF
  let row_end = out_base + params.row_length;  // exclusive; the row is contiguous in the output
  let word = out_base / 2u + j;
  if (2u * word >= row_end) { return; }
  var old = 0u;
  if (2u * word < out_base || 2u * word + 1u >= row_end) { old = out_buf[word]; }
  var result = 0u;
  for (var h = 0u; h < 2u; h = h + 1u) {
    let e = 2u * word + h;
    var bits = (old >> (16u * h)) & 0xFFFFu;
    if (e >= out_base && e < row_end) { bits = row_element(e - out_base, in_base, inside).y & 0xFFFFu; }
    result = result | (bits << (16u * h));
  }
  out_buf[word] = result;
#else
  // Elements j, j + C, j + 2C, j + 3C of the row (C = chunks_per_row): neighbouring invocations
  // touch neighbouring elements on every step, so loads and stores stay coalesced.
  for (var k = 0u; k < 4u; k = k + 1u) {
    let p = j + k * params.chunks_per_row;
    if (p >= params.row_length) { break; }
    let element = row_element(p, in_base, inside);
    out_buf[out_base + element.x] = element.y;
  }
#endif
}
