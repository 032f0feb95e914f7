// Tiled transpose of the two dims that swap the innermost position: input [.., M, .., N] with N
// contiguous, output [.., N, .., M] with M contiguous, any other (batch) dims around them. Each
// workgroup moves one 32x32 tile through workgroup memory so that both the reads (along N) and the
// writes (along M) are coalesced; the tile row is padded to 33 words against bank conflicts.
// HALF: output words are written whole where both halves lie in this tile (atomicStore) and
// half by half where the other half belongs to another tile or lies outside the output (odd M or
// odd strides): atomicAnd clears our half, atomicOr sets it, and the two commute with the other
// owner's pair, so no half is lost whichever workgroup runs first.

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
#if HALF
@group(0) @binding(1) var<storage, read_write> out_buf: array<atomic<u32>>;
#else
@group(0) @binding(1) var<storage, read_write> out_buf: array<u32>;
#endif
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
  // Per output row n of the tile, the words covering m in [m0, m_end): at most 17 (odd start).
  let m_end = min(m0 + 32u, params.m);
  let flat = lid.y * 32u + lid.x;
  for (var task = flat; task < 32u * 17u; task = task + 256u) {
    let nl = task / 17u;
    let n = n0 + nl;
    if (n >= params.n) { continue; }
    let row_start = out_base + n * params.out_stride_n;
    let word = (row_start + m0) / 2u + task % 17u;
    let m_lo = i32(2u * word) - i32(row_start);  // m of the low half
    let low_in = m_lo >= i32(m0) && m_lo < i32(m_end);
    let high_in = m_lo + 1 >= i32(m0) && m_lo + 1 < i32(m_end);
    if (low_in && high_in) {
      let ml = u32(m_lo) - m0;
      atomicStore(&out_buf[word], tile[ml * 33u + nl] | (tile[(ml + 1u) * 33u + nl] << 16u));
    } else if (low_in) {
      atomicAnd(&out_buf[word], 0xFFFF0000u);
      atomicOr(&out_buf[word], tile[(u32(m_lo) - m0) * 33u + nl]);
    } else if (high_in) {
      atomicAnd(&out_buf[word], 0x0000FFFFu);
      atomicOr(&out_buf[word], tile[(u32(m_lo + 1) - m0) * 33u + nl] << 16u);
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
