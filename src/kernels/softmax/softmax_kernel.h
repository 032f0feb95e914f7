// Softmax and LogSoftmax along one axis (ONNX opset >= 13 semantics), f32/f16 with f32 math.
#pragma once
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// `axis` may be negative. y must have x's shape and dtype; throws std::invalid_argument otherwise.
void record_softmax(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                    bool log_softmax, const Tensor& y);

}  // namespace onda::kernels
