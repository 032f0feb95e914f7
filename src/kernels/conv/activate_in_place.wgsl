// The fused activation of a ConvTranspose whose columns were gathered in row chunks: applied to
// batch chunk.x of y once all its chunks have been added: its elements from first_row on, Y bound
// from its flat element y_base on.
#include "conv/conv_common.wgsl"
#include "gemm/activation.wgsl"
{{Y_ACCESS}}
@group(0) @binding(1) var<uniform> params: ConvParams;

#include "conv/conv_main.wgsl"
  let per_batch = params.out_size.w * params.out_size.x * params.out_size.y * params.out_size.z;
  let i = params.offsets.w + params.chunk.x * per_batch + params.first_row + idx - params.y_base;
  store_y(i, activate(load_y(i)));
}
