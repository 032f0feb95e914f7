// The windowed-identity ConvTranspose of overlap_add.wgsl (the iSTFT overlap-add) with coalesced
// memory access. Write an output position as t = o + pad = m s + j (hop m, offset j < s): it gathers
// x[n, j + q s, m - q] diag[j + q s] over q. overlap_add.wgsl gives consecutive invocations
// consecutive o, i.e. consecutive channels k, whose x entries lie L_in elements apart (one memory
// segment per invocation). Here a workgroup takes a tile of 32 hops x 32 offsets: each group of 32
// invocations (lid.x) runs along m, so its loads x[n, k, m - q] are consecutive frames (contiguous),
// and the tile goes through workgroup memory to be stored along j (contiguous). The classic
// shared-memory transpose (e.g. NVIDIA's "An Efficient Matrix Transpose in CUDA C/C++"), with the
// tile padded to 33 columns so the transposed reads hit distinct banks.
// Uniforms: chunk.z = hop tiles, chunk.w = offset tiles, region.x = the first hop (pad / s).
// CHECKED: as in overlap_add.wgsl, a raised flag means the weight is not a windowed identity and
// every output is the dense sum instead.
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read> diag: array<f32>;
#if CHECKED
@group(0) @binding(2) var<storage, read> flag: array<u32>;
{{W_ACCESS}}
#endif
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

var<workgroup> tile: array<f32, 1056>;  // [32 offsets][33]: hops along the row, one pad column

@compute @workgroup_size(32, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
  let tiles_m = params.chunk.z;
  let tiles_j = params.chunk.w;
  let linear = wg.y * nwg.x + wg.x;
  let n = linear / (tiles_m * tiles_j);
  if (n >= params.stride.w) { return; }  // the excess of a split dispatch (uniform per workgroup)
  let rest = linear % (tiles_m * tiles_j);
  let m0 = params.region.x + (rest % tiles_m) * 32u;
  let j0 = (rest / tiles_m) * 32u;
  let s = params.stride.z;
  let channels = params.kernel.z;
  let length_in = params.in_size.z;
  let length_out = params.out_size.z;
  let pad = u32(params.pad.z);
  let x_base = params.offsets.x + n * channels * length_in;
  var bias = 0.0;
#if HAS_BIAS
  bias = load_bias(params.offsets.z);
#endif
  let m = m0 + lid.x;
  // Frames i = m - q < length_in: q from max(0, m - length_in + 1).
  let q_first = select(0u, m + 1u - length_in, m >= length_in);
  for (var r = 0u; r < 4u; r = r + 1u) {
    let jl = lid.y + 8u * r;
    let j = j0 + jl;
    var acc = bias;
    if (j < s) {
      for (var q = q_first; q <= m; q = q + 1u) {
        let k = j + q * s;
        if (k >= channels) { break; }
        acc = acc + load_x(x_base + k * length_in + (m - q)) * diag[k];
      }
    }
#if CHECKED
    // The weight turned out not to be a windowed identity: the dense sum (uniform branch).
    let t = m * s + j;
    if (flag[0] != 0u && j < s && t >= pad && t - pad < length_out) {
      let o = t - pad;
      acc = bias;
      for (var k = first_tap(o, 2u); k < channels; k = k + params.tap_step.z) {
        let i = transpose_source(o, k, 2u);
        if (i < 0) { continue; }
        for (var c = 0u; c < channels; c = c + 1u) {
          acc = acc + load_x(x_base + c * length_in + u32(i)) * load_w(params.offsets.y + c * channels + k);
        }
      }
    }
#endif
    tile[jl * 33u + lid.x] = acc;
  }
  workgroupBarrier();
  let j = j0 + lid.x;
  for (var r = 0u; r < 4u; r = r + 1u) {
    let ml = lid.y + 8u * r;
    let t = (m0 + ml) * s + j;
    if (j < s && t >= pad && t - pad < length_out) {
      store_y(params.offsets.w + n * length_out + (t - pad), activate(tile[lid.x * 33u + ml]));
    }
  }
}
