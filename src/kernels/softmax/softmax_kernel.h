// Softmax and LogSoftmax along one axis (ONNX opset >= 13 semantics), f32/f16 with f32 math.
#pragma once
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// Rows (softmax axis innermost) up to this length are held in registers: one read of x
// (softmax_rows.wgsl); longer ones, and axes with inner elements, read x twice (softmax.wgsl).
constexpr int64_t kRegisterRowMax = 16 * 256;

// `axis` may be negative. y must have x's shape and dtype; throws std::invalid_argument otherwise.
void record_softmax(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& x, int64_t axis,
                    bool log_softmax, const Tensor& y);

}  // namespace onda::kernels
