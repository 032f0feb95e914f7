// Direct Conv (any group, stride, dilation, padding): one invocation per output element
// y[n, co, o] = bias[co] + sum over the group's input channels ci and taps k of
// x[n, ci, o * s + k * d - pad] * w[co, ci, k], accumulated in f32.
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
{{X_ACCESS}}
{{W_ACCESS}}
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let c_in = params.in_size.w;
  let c_out = params.out_size.w;
  let positions = params.region.y - params.region.x;
  let p = params.region.x + idx % positions;
  let co = (idx / positions) % c_out;
  let n = params.chunk.x + idx / (positions * c_out);
  let o = unflatten(p, params.out_size.xyz);
  let in_per_group = c_in / params.kernel.w;
  let g = co / (c_out / params.kernel.w);
  let taps = params.kernel.x * params.kernel.y * params.kernel.z;
  let in_positions = params.in_size.x * params.in_size.y * params.in_size.z;
  var acc = 0.0;
#if HAS_BIAS
  acc = load_bias(params.offsets.z + co);
#endif
  // Taps outside, channels inside: the source coordinates are computed once per tap.
  for (var k0 = 0u; k0 < params.kernel.x; k0 = k0 + 1u) {
    let i0 = conv_source(o.x, k0, 0u);
    if (i0 < 0) { continue; }
    for (var k1 = 0u; k1 < params.kernel.y; k1 = k1 + 1u) {
      let i1 = conv_source(o.y, k1, 1u);
      if (i1 < 0) { continue; }
      for (var k2 = 0u; k2 < params.kernel.z; k2 = k2 + 1u) {
        let i2 = conv_source(o.z, k2, 2u);
        if (i2 < 0) { continue; }
        let xi = params.offsets.x + (n * c_in + g * in_per_group) * in_positions +
                 flatten(vec3<u32>(u32(i0), u32(i1), u32(i2)), params.in_size.xyz);
        let wi = params.offsets.y + co * in_per_group * taps + flatten(vec3<u32>(k0, k1, k2), params.kernel.xyz);
        for (var cl = 0u; cl < in_per_group; cl = cl + 1u) {
          acc = acc + load_x(xi + cl * in_positions) * load_w(wi + cl * taps);
        }
      }
    }
  }
  store_y(params.offsets.w + (n * c_out + co) * (params.out_size.x * params.out_size.y * params.out_size.z) + p, activate(acc));
}
