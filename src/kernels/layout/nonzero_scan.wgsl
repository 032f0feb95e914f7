// NonZero's middle pass (layout/nonzero.h): one workgroup turns the per-block counts into exclusive
// offsets in place, 256 blocks at a time with a running carry, and writes the total.
#include "layout/nonzero_common.wgsl"

@group(0) @binding(0) var<storage, read_write> block_offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> total: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32) {
  var carry = 0u;
  let chunks = (params.blocks + 255u) / 256u;
  for (var chunk = 0u; chunk < chunks; chunk = chunk + 1u) {
    let b = chunk * 256u + lid;
    var count = 0u;
    if (b < params.blocks) { count = block_offsets[params.offsets_offset + b]; }
    let inclusive = inclusive_scan(lid, count);
    if (b < params.blocks) { block_offsets[params.offsets_offset + b] = carry + inclusive - count; }
    carry = carry + workgroupUniformLoad(&partial[255]);
    workgroupBarrier();  // everyone has read partial[255] before the next chunk overwrites it
  }
  if (lid == 0u) { total[params.count_offset] = carry; }
}
