// The implicit-GEMM ConvTranspose's weight layout (conv_implicit.wgsl with TRANSPOSE): one block per
// stride phase (ry, rx), wp[phase][ci][jy, jx][co] = w[ci, co, ry + s_y jy, rx + s_x jx] (f32) for
// ci < ci_pad (C_in rounded up to the K step), co < co_pad (C_out rounded up to 4) and taps j < J =
// ceil(K / s); zero outside W (a tap r + s j >= K, the padding rows and columns). Output channels
// contiguous, as implicit_pack_w.wgsl, so a K step's W tile loads as coalesced vec4s.
// kernel.yz: K; tap_step.yz: J; stride.yz: s; chunk.x: ci_pad; region.z: co_pad;
// dilation.w: invocations (phases ci_pad J co_pad).
#include "conv/conv_common.wgsl"
{{W_ACCESS}}
@group(0) @binding(1) var<storage, read_write> wp: array<f32>;
@group(0) @binding(2) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let co_pad = params.region.z;
  let ci_pad = params.chunk.x;
  let jy_n = params.tap_step.y;
  let jx_n = params.tap_step.z;
  let taps = jy_n * jx_n;
  let co = idx % co_pad;
  let tap = (idx / co_pad) % taps;
  let ci = (idx / (co_pad * taps)) % ci_pad;
  let phase = idx / (co_pad * taps * ci_pad);
  let ky = phase / params.stride.z + params.stride.y * (tap / jx_n);
  let kx = phase % params.stride.z + params.stride.z * (tap % jx_n);
  var v = 0.0;
  if (co < params.out_size.w && ci < params.in_size.w && ky < params.kernel.y && kx < params.kernel.z) {
    v = load_w(params.offsets.y + ((ci * params.out_size.w + co) * params.kernel.y + ky) * params.kernel.z + kx);
  }
  wp[params.offsets.w + idx] = v;
}
