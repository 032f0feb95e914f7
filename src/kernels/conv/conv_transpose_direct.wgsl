// Direct ConvTranspose (any group, stride, dilation, padding, output padding) as a gather: one
// invocation per output element y[n, co, o] = bias[co] + sum over the group's input channels ci and
// taps k with o + pad - k * d = i * s, 0 <= i < in, of x[n, ci, i] * w[ci, co % C_out/group, k].
// Each output is written once (no scatter, no atomics); f32 accumulation.
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
  let out_per_group = c_out / params.kernel.w;
  let g = co / out_per_group;
  let taps = params.kernel.x * params.kernel.y * params.kernel.z;
  let in_positions = params.in_size.x * params.in_size.y * params.in_size.z;
  var acc = 0.0;
#if HAS_BIAS
  acc = load_bias(params.offsets.z + co);
#endif
  // Taps outside, channels inside: the source coordinates are computed once per tap.
  let w_col = co % out_per_group;
  for (var k0 = first_tap(o.x, 0u); k0 < params.kernel.x; k0 = k0 + params.tap_step.x) {
    let i0 = transpose_source(o.x, k0, 0u);
    if (i0 < 0) { continue; }
    for (var k1 = first_tap(o.y, 1u); k1 < params.kernel.y; k1 = k1 + params.tap_step.y) {
      let i1 = transpose_source(o.y, k1, 1u);
      if (i1 < 0) { continue; }
      for (var k2 = first_tap(o.z, 2u); k2 < params.kernel.z; k2 = k2 + params.tap_step.z) {
        let i2 = transpose_source(o.z, k2, 2u);
        if (i2 < 0) { continue; }
        let xi = params.offsets.x + n * c_in * in_positions + g * in_per_group * in_positions +
                 flatten(vec3<u32>(u32(i0), u32(i1), u32(i2)), params.in_size.xyz);
        let wi = params.offsets.y + (g * in_per_group * out_per_group + w_col) * taps + flatten(vec3<u32>(k0, k1, k2), params.kernel.xyz);
        for (var cl = 0u; cl < in_per_group; cl = cl + 1u) {
          acc = acc + load_x(xi + cl * in_positions) * load_w(wi + cl * out_per_group * taps);
        }
      }
    }
  }
  store_y(params.offsets.w + (n * c_out + co) * (params.out_size.x * params.out_size.y * params.out_size.z) + p, activate(acc));
}
