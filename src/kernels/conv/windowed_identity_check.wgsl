// For a ConvTranspose weight [C, 1, C] that lives only on the GPU: extracts its diagonal
// diag[c] = w[c, 0, c] and raises flag[0] if any other entry is non-zero (not a windowed identity),
// so that overlap_add.wgsl (CHECKED) knows, on the GPU, whether the overlap-add is exact.
#include "conv/conv_common.wgsl"
{{W_ACCESS}}
@group(0) @binding(1) var<storage, read_write> diag: array<f32>;
@group(0) @binding(2) var<storage, read_write> flag: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> params: ConvParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  // 16 consecutive entries per invocation from entry region.x (a weight over one storage binding is
  // checked in windows: offsets.y then relative to the window), up to region.z (dilation.w =
  // invocations).
  let first = params.region.x + invocation(wg, nwg, lid) * 16u;
  if (first >= params.region.z) { return; }
  let channels = params.kernel.z;
  var off_diagonal = false;
  for (var idx = first; idx < min(first + 16u, params.region.z); idx = idx + 1u) {
    let c = idx / channels;
    let v = load_w(params.offsets.y + idx);
    if (c == idx % channels) {
      diag[c] = v;
    } else if (v != 0.0) {
      off_diagonal = true;
    }
  }
  if (off_diagonal) { atomicOr(&flag[0], 1u); }
}
