// ONNX AveragePool and MaxPool, 2-D (and 1-D as H = 1) over the last two dims of NCHW / NCW.
// (Pooling moves no data across dims, but it is a windowed gather like Pad/Resize, so it lives here.)
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class PoolKind { Average, Max };

struct Pool2dAttributes {
  PoolKind kind = PoolKind::Average;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dilation_h = 1, dilation_w = 1;
  bool count_include_pad = false;  // AveragePool
  bool ceil_mode = false;  // output size rounds up; a last window starting in the end padding is dropped
};

// Output [.., out_h, out_w] of an input of rank 3 (H = 1) or 4; the op layer maps auto_pad to pads.
Shape pool2d_output_shape(const Shape& input, const Pool2dAttributes& attributes);

// f32 or f16; throws std::invalid_argument on other dtypes, non-positive kernel/stride/dilation,
// pads not smaller than the (dilated) kernel, or a wrong output shape. MaxPool's Indices output is
// not produced.
void record_pool2d(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                   const Pool2dAttributes& attributes, const Tensor& output);

}  // namespace onda::kernels
