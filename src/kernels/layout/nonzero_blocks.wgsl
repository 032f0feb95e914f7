// NonZero's per-block passes (layout/nonzero.h): COUNT writes each block's nonzero count; otherwise
// (scatter) each nonzero element's coordinates go to column (block offset + rank in block) of the
// [rank, count] int output. MAGNITUDE masks the bits that make an element nonzero (the sign bit is
// left out for floats, so -0.0 is zero); HALF reads float16 halves.
#include "layout/nonzero_common.wgsl"

@group(0) @binding(0) var<storage, read> x_buf: array<u32>;
#if COUNT
@group(0) @binding(1) var<storage, read_write> block_offsets: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;
#else
@group(0) @binding(1) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(2) var<storage, read_write> indices: array<i32>;
@group(0) @binding(3) var<uniform> params: Params;
#endif

fn is_nonzero(i: u32) -> bool {
  let at = params.x_offset + i;
#if HALF
  let bits = (x_buf[at >> 1u] >> ((at & 1u) << 4u)) & 0xFFFFu;
#else
  let bits = x_buf[at];
#endif
  return (bits & {{MAGNITUDE}}) != 0u;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let block = wg.y * nwg.x + wg.x;  // uniform across the workgroup: barriers stay in uniform flow
  let i = block * 256u + lid;
  var flag = 0u;
  if (block < params.blocks && i < params.numel && is_nonzero(i)) { flag = 1u; }
  let rank_in_block = inclusive_scan(lid, flag);
#if COUNT
  if (lid == 255u && block < params.blocks) { block_offsets[params.offsets_offset + block] = rank_in_block; }
#else
  if (flag == 1u) {
    let column = block_offsets[params.offsets_offset + block] + rank_in_block - 1u;
    var rest = i;
    for (var d = i32(params.rank) - 1; d >= 0; d = d - 1) {
      let size = params.shape[d / 4][d % 4];
      indices[params.indices_offset + u32(d) * params.count + column] = i32(rest % size);
      rest = rest / size;
    }
  }
#endif
}
