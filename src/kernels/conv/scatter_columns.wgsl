// Conv GEMM over a chunk of output positions: copies the chunk's result tmp[C_out, p - p_begin]
// (f32, bias already added by the GEMM epilogue) into y[n, co, p] for p in [region.x, region.y),
// output channels from first_row on; Y is bound from its flat element y_base on.
#include "conv/conv_common.wgsl"
@group(0) @binding(0) var<storage, read> tmp: array<f32>;
{{Y_ACCESS}}
@group(0) @binding(2) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let positions = params.region.y - params.region.x;
  let co = params.first_row + idx / positions;
  let p = params.region.x + idx % positions;
  let out_positions = params.out_size.x * params.out_size.y * params.out_size.z;
  store_y(params.offsets.w + (params.chunk.x * params.out_size.w + co) * out_positions + p - params.y_base,
          tmp[params.offsets.x + params.first_row * positions + idx]);
}
