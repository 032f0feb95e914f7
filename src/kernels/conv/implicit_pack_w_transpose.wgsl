// The implicit-GEMM ConvTranspose's weight layout (conv_implicit.wgsl with TRANSPOSE): rows are the
// (stride phase, output channel) pairs m = phase C_out + co, phase = ry s_x + rx:
// wp[ci, (jy, jx), m] = w[ci, co, ry + s_y jy, rx + s_x jx] (f32) for ci < ci_pad (C_in rounded up to
// the K step), m < m_pad (phases C_out rounded up to 4) and taps j < J = ceil(K / s); zero outside W
// (a tap r + s j >= K, the padding rows and columns). Rows contiguous, as implicit_pack_w.wgsl, so a
// K step's W tile loads as coalesced vec4s.
// kernel.yz: K; tap_step.yz: J; stride.yz: s; region.z: m_pad; dilation.w: invocations (ci_pad J m_pad).
#include "conv/conv_common.wgsl"
{{W_ACCESS}}
@group(0) @binding(1) var<storage, read_write> wp: array<f32>;
@group(0) @binding(2) var<uniform> params: ConvParams;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
  let idx = invocation(wg, nwg, lid);
  if (idx >= params.dilation.w) { return; }
  let m_pad = params.region.z;
  let jx_n = params.tap_step.z;
  let taps = params.tap_step.y * jx_n;
  let c_out = params.out_size.w;
  let m = idx % m_pad;
  let tap = (idx / m_pad) % taps;
  let ci = idx / (m_pad * taps);
  let phase = m / c_out;
  let co = m % c_out;
  let ky = phase / params.stride.z + params.stride.y * (tap / jx_n);
  let kx = phase % params.stride.z + params.stride.z * (tap % jx_n);
  var v = 0.0;
  if (m < params.stride.y * params.stride.z * c_out && ci < params.in_size.w && ky < params.kernel.y &&
      kx < params.kernel.z) {
    v = load_w(params.offsets.y + ((ci * c_out + co) * params.kernel.y + ky) * params.kernel.z + kx);
  }
  wp[params.offsets.w + idx] = v;
}
