// Strided copy of an f32/f16 tensor into a float32 buffer: dst[dst_offset + i] for i over a 3-D
// output box [n0, n1, n2], read from src at src_offset + i0*s0 + i1*s1 + i2*s2. Used to transpose
// R into R^T, to widen biases / peepholes / initial states to float32 (permuting layout 1), and to
// make X time-major for the chunked projection. Prepended: tensor_access for "src" (binding 0).
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;

struct GatherParams {
  dims: vec4<u32>,     // n0, n1, n2, total
  strides: vec4<u32>,  // s0, s1, s2, src_offset
  dst_offset: vec4<u32>,
}
@group(0) @binding(2) var<uniform> params: GatherParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
  let i = (wg.y * nwg.x + wg.x) * 256u + lid.x;
  if (i >= params.dims.w) {
    return;
  }
  let i2 = i % params.dims.z;
  let rest = i / params.dims.z;
  let i1 = rest % params.dims.y;
  let i0 = rest / params.dims.y;
  let s = params.strides;
  dst[params.dst_offset.x + i] = load_src(s.w + i0 * s.x + i1 * s.y + i2 * s.z);
}
