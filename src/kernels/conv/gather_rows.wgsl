// ConvTranspose GEMM over a chunk of input rows of one batch: copies x[n, ci, r] for r in
// [chunk.z, chunk.w) into a contiguous f32 slab[ci, r - chunk.z], the GEMM's transposed A; channels
// from first_row on, X bound from its flat element x_base on (one window of input channels).
#include "conv/conv_common.wgsl"
{{X_ACCESS}}
@group(0) @binding(1) var<storage, read_write> slab: array<f32>;
@group(0) @binding(2) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let rows = params.chunk.w - params.chunk.z;
  let ci = params.first_row + idx / rows;
  let r = params.chunk.z + idx % rows;
  let in_positions = params.in_size.x * params.in_size.y * params.in_size.z;
  slab[params.offsets.w + params.first_row * rows + idx] =
      load_x(params.offsets.x + (params.chunk.x * params.in_size.w + ci) * in_positions + r - params.x_base);
}
