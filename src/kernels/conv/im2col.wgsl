// Conv lowered to GEMM: the column matrix of one chunk, col[n, ci * taps + k, p - p_begin] =
// x[n, ci, p * s + k * d - pad] (0 in the padding), for output positions p in [region.x, region.y)
// and batches [chunk.x, chunk.x + chunk.y). The GEMM then computes y[n] = w[C_out, C_in * taps] col[n].
// A dispatch may write only the rows from first_row on (the input channels one window of X holds):
// X is then bound from its flat element x_base on.
#include "conv/conv_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read_write> col: array<f32>;
@group(0) @binding(2) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let positions = params.region.y - params.region.x;
  let taps = params.kernel.x * params.kernel.y * params.kernel.z;
  let p = params.region.x + idx % positions;
  let row = params.first_row + idx / positions;  // (n - first) * C_in * taps + ci * taps + k
  let k = row % taps;
  let ci = (row / taps) % params.in_size.w;
  let n = params.chunk.x + row / (taps * params.in_size.w);
  let o = unflatten(p, params.out_size.xyz);
  let kk = unflatten(k, params.kernel.xyz);
  let i0 = conv_source(o.x, kk.x, 0u);
  let i1 = conv_source(o.y, kk.y, 1u);
  let i2 = conv_source(o.z, kk.z, 2u);
  var v = 0.0;
  if (i0 >= 0 && i1 >= 0 && i2 >= 0) {
    let in_positions = params.in_size.x * params.in_size.y * params.in_size.z;
    let xi = flatten(vec3<u32>(u32(i0), u32(i1), u32(i2)), params.in_size.xyz);
    v = load_x(params.offsets.x + (n * params.in_size.w + ci) * in_positions + xi - params.x_base);
  }
  col[params.offsets.w + params.first_row * positions + idx] = v;
}
