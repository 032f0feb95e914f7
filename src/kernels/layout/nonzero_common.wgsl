// What the NonZero shaders share: their parameters and the inclusive scan of one workgroup's 256
// values (Hillis-Steele: log2(256) = 8 steps of adding the value `step` places back).
struct Params {
  numel: u32,
  blocks: u32,
  x_offset: u32,
  offsets_offset: u32,
  count_offset: u32,
  indices_offset: u32,
  rank: u32,
  count: u32,      // scatter: the total read back after the scan
  shape: array<vec4<u32>, 2>,  // dim d at [d / 4][d % 4]
}

var<workgroup> partial: array<u32, 256>;

// Every invocation of the workgroup must call it (it holds barriers); returns the sum of the values
// of invocations 0..lid.
fn inclusive_scan(lid: u32, value: u32) -> u32 {
  partial[lid] = value;
  workgroupBarrier();
  for (var step = 1u; step < 256u; step = step << 1u) {
    var add = 0u;
    if (lid >= step) { add = partial[lid - step]; }
    workgroupBarrier();
    partial[lid] = partial[lid] + add;
    workgroupBarrier();
  }
  return partial[lid];
}
