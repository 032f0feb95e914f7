// Concat of INPUTS whole blocks (concat_blocks.h): output element i comes from the input whose block
// holds it. Each invocation moves PER_THREAD elements 256 apart, all loaded before any is stored; a
// workgroup's elements are contiguous, so it reads one input or two.

struct Params {
  total: u32,
  out_offset: u32,
  _pad0: u32,
  _pad1: u32,
  ends: array<vec4<u32>, 2>,        // input k's block ends before element ends[k / 4][k % 4]
  in_offsets: array<vec4<u32>, 2>,  // input k's element 0 in its binding
}

#for k INPUTS
@group(0) @binding({{k}}) var<storage, read> in{{k}}: array<u32>;
#endfor
@group(0) @binding({{INPUTS}}) var<storage, read_write> out_buf: array<u32>;
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const PER_THREAD = 4u;

fn block_end(k: u32) -> u32 { return params.ends[k / 4u][k % 4u]; }

// The bits of output element i (< total).
fn element(i: u32) -> u32 {
  var start = 0u;
#for k INPUTS
  if (i < block_end({{k}}u)) { return in{{k}}[params.in_offsets[{{k}}u / 4u][{{k}}u % 4u] + i - start]; }
  start = block_end({{k}}u);
#endfor
  return 0u;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let first = (wg.y * nwg.x + wg.x) * 256u * PER_THREAD + lid;
  var bits: array<u32, PER_THREAD>;
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let i = first + j * 256u;
    bits[j] = 0u;
    if (i < params.total) { bits[j] = element(i); }
  }
  for (var j = 0u; j < PER_THREAD; j = j + 1u) {
    let i = first + j * 256u;
    if (i < params.total) { out_buf[params.out_offset + i] = bits[j]; }
  }
}
