// The device peak probe's copy kernel (kernels/probe/device_peak.h): dst = src, one vec4 per
// invocation per step of a grid-stride loop. A compute copy rather than copyBufferToBuffer: on some
// drivers the copy engine that serves buffer copies reaches well under the memory bandwidth that
// shaders see (a quarter of it on an NVIDIA H100), and kernels are what the roofline compares with.

struct Params {
  count: u32,  // vec4s to copy
  pad0: u32,
  pad1: u32,
  pad2: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
  let stride = groups.x * 256u;
  for (var i = gid.x; i < params.count; i += stride) {
    dst[i] = src[i];
  }
}
