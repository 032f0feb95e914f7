// ConvTranspose lowered to GEMM: col[n, i, co * taps + k] = sum_ci x[n, ci, i] w[ci, co, k] holds
// every (input position, tap) contribution; this gathers, for each output y[n, co, o] of the
// chunk's region, the taps whose source i (o + pad - k * d = i * s) lies in the chunk's input rows
// [chunk.z, chunk.w). Each output is written once per chunk (no atomics): the first chunk of a batch
// starts from the bias, later chunks (ACCUMULATE) add to what earlier ones wrote. ACTIVATE: the
// chunk completes its outputs, apply the fused activation. A one-batch dispatch may cover only the
// output channels from first_row on, Y bound from its flat element y_base on (one window of Y).
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
@group(0) @binding(0) var<storage, read> col: array<f32>;
{{BIAS_ACCESS}}
{{Y_ACCESS}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let c_out = params.out_size.w;
  let positions = params.region.y - params.region.x;
  let p = params.region.x + idx % positions;
  let co = params.first_row + (idx / positions) % c_out;
  let nl = idx / (positions * c_out);  // batch within the chunk
  let n = params.chunk.x + nl;
  let o = unflatten(p, params.out_size.xyz);
  let taps = params.kernel.x * params.kernel.y * params.kernel.z;
  let rows = params.chunk.w - params.chunk.z;
  let y_index = params.offsets.w + (n * c_out + co) * (params.out_size.x * params.out_size.y * params.out_size.z) + p - params.y_base;
#if ACCUMULATE
  var acc = load_y(y_index);
#else
  var acc = 0.0;
#if HAS_BIAS
  acc = load_bias(params.offsets.z + co);
#endif
#endif
  for (var k0 = first_tap(o.x, 0u); k0 < params.kernel.x; k0 = k0 + params.tap_step.x) {
    let i0 = transpose_source(o.x, k0, 0u);
    if (i0 < 0) { continue; }
    for (var k1 = first_tap(o.y, 1u); k1 < params.kernel.y; k1 = k1 + params.tap_step.y) {
      let i1 = transpose_source(o.y, k1, 1u);
      if (i1 < 0) { continue; }
      for (var k2 = first_tap(o.z, 2u); k2 < params.kernel.z; k2 = k2 + params.tap_step.z) {
        let i2 = transpose_source(o.z, k2, 2u);
        if (i2 < 0) { continue; }
        let flat = flatten(vec3<u32>(u32(i0), u32(i1), u32(i2)), params.in_size.xyz);
        if (flat < params.chunk.z || flat >= params.chunk.w) { continue; }
        let k = flatten(vec3<u32>(k0, k1, k2), params.kernel.xyz);
        acc = acc + col[params.offsets.x + (nl * rows + flat - params.chunk.z) * params.region.z + co * taps + k];
      }
    }
  }
#if ACTIVATE
  acc = activate(acc);
#endif
  store_y(y_index, acc);
}
