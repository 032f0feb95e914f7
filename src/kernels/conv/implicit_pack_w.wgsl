// The implicit-GEMM Conv's weight layout: wp[ci, tap, co] = w[co, ci, tap] (f32) for ci < ci_pad
// (C_in rounded up to the K step) and co < co_pad (C_out rounded up to 4), zero outside W. Output
// channels contiguous, so a K step's W tile is BK rows of BM contiguous floats: vec4 loads, coalesced
// (gathering W[co, c0.., tap] straight from the ONNX layout touches one 32-byte sector per element).
// region.z = co_pad; dilation.w = invocations (ci_pad * taps * co_pad).
#include "conv/conv_common.wgsl"
{{W_ACCESS}}
@group(0) @binding(1) var<storage, read_write> wp: array<f32>;
@group(0) @binding(2) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let taps = params.kernel.x * params.kernel.y * params.kernel.z;
  let co_pad = params.region.z;
  let co = idx % co_pad;
  let tap = (idx / co_pad) % taps;
  let ci = idx / (co_pad * taps);
  var v = 0.0;
  if (co < params.out_size.w && ci < params.in_size.w) {
    v = load_w(params.offsets.y + (co * params.in_size.w + ci) * taps + tap);
  }
  wp[params.offsets.w + idx] = v;
}
