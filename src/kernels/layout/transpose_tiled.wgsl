// Tiled transpose of the two dims that swap the innermost position: input [.., M, .., N] with N
// contiguous, output [.., N, .., M] with M contiguous, any other (batch) dims around them. Each
// workgroup moves one 32x32 tile through workgroup memory so that both the reads (along N) and the
// writes (along M) are coalesced; the tile row is padded to 33 words against bank conflicts.
// HALF (M even, so a tile's output words never straddle tiles): each invocation writes whole words
// (two consecutive m) of the output.

struct Params {
  m: u32,
  n: u32,
  in_stride_m: u32,
  out_stride_n: u32,
  tiles_m: u32,
  tiles_n: u32,
  batch_rank: u32,
  groups: u32,                        // batches * tiles_m * tiles_n
  in_offset: u32,
  out_offset: u32,
  _pad0: u32,
  _pad1: u32,
  batch_shape: array<vec4<u32>, 2>,
  batch_in_strides: array<vec4<u32>, 2>,
  batch_out_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<storage, read> in_buf: array<u32>;
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

#include "layout/load_bits.wgsl"

var<workgroup> tile: array<u32, 1056>;  // 32 rows of 33

@compute @workgroup_size(32, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let group = wg.y * nwg.x + wg.x;
  if (group >= params.groups) { return; }  // uniform over the workgroup
  let tn = group % params.tiles_n;
  let tm = (group / params.tiles_n) % params.tiles_m;
  var rest = group / (params.tiles_n * params.tiles_m);
  var in_base = params.in_offset;
  var out_base = params.out_offset;
  for (var d = i32(params.batch_rank) - 1; d >= 0; d = d - 1) {
    let size = params.batch_shape[d / 4][d % 4];
    let c = rest % size;
    rest = rest / size;
    in_base = in_base + c * params.batch_in_strides[d / 4][d % 4];
    out_base = out_base + c * params.batch_out_strides[d / 4][d % 4];
  }
  let m0 = tm * 32u;
  let n0 = tn * 32u;
  for (var r = 0u; r < 4u; r = r + 1u) {
    let ml = lid.y + 8u * r;
    let m = m0 + ml;
    let n = n0 + lid.x;
    if (m < params.m && n < params.n) { tile[ml * 33u + lid.x] = load_bits(in_base + m * params.in_stride_m + n); }
  }
  workgroupBarrier();
#if HALF
  let wl = lid.x % 16u;
  for (var r = 0u; r < 2u; r = r + 1u) {
    let nl = lid.y * 2u + lid.x / 16u + 16u * r;
    let m = m0 + 2u * wl;
    let n = n0 + nl;
    if (m < params.m && n < params.n) {
      out_buf[(out_base + n * params.out_stride_n + m) / 2u] =
          tile[2u * wl * 33u + nl] | (tile[(2u * wl + 1u) * 33u + nl] << 16u);
    }
  }
#else
  for (var r = 0u; r < 4u; r = r + 1u) {
    let nl = lid.y + 8u * r;
    let m = m0 + lid.x;
    let n = n0 + nl;
    if (m < params.m && n < params.n) { out_buf[out_base + n * params.out_stride_n + m] = tile[lid.x * 33u + nl]; }
  }
#endif
}
