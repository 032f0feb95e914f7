// ONNX ScatterND, reduction none, after the data has been copied to the output: each invocation
// moves one element of `updates` to out[indices[row] (the first q coordinates) ++ slice position].
// Negative indices wrap once; rows still out of range are skipped (the host rejects them first
// when it knows the indices). HALF: two updates may own the two halves of one output word, so the
// half is replaced with atomicAnd + atomicOr, which commute between different halves.

struct Params {
  threads: u32,
  slice: u32,                        // elements per index row (product of data dims q..r-1)
  depth: u32,                        // q, the length of one index tuple
  in_offset: u32,
  indices_offset: u32,
  out_offset: u32,
  _pad0: u32,
  _pad1: u32,
  shape: array<vec4<i32>, 2>,        // data dims 0..q-1
  strides: array<vec4<u32>, 2>,      // their element strides in the output
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<i32>;
#if HALF
@group(0) @binding(2) var<storage, read_write> out_buf: array<atomic<u32>>;
#else
@group(0) @binding(2) var<storage, read_write> out_buf: array<u32>;
#endif
@group(0) @binding(3) var<uniform> params: Params;

#include "layout/load_bits.wgsl"

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let t = (wg.y * nwg.x + wg.x) * 256u + lid;
  if (t >= params.threads) { return; }
  let row = t / params.slice;
  var base = 0u;
  for (var j = 0u; j < params.depth; j = j + 1u) {
    let n = params.shape[j / 4u][j % 4u];
    var index = indices[params.indices_offset + row * params.depth + j];
    if (index < 0) { index = index + n; }
    if (index < 0 || index >= n) { return; }
    base = base + u32(index) * params.strides[j / 4u][j % 4u];
  }
  let e = params.out_offset + base + t % params.slice;
  let bits = load_bits(params.in_offset + t);
#if HALF
  let shift = (e & 1u) * 16u;
  atomicAnd(&out_buf[e / 2u], ~(0xFFFFu << shift));
  atomicOr(&out_buf[e / 2u], bits << shift);
#else
  out_buf[e] = bits;
#endif
}
