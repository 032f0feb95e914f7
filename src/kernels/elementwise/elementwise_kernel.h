// Records one elementwise op (unary, binary with broadcasting, Where, Cast) over GPU tensors.
#pragma once
#include <span>

#include "kernels/elementwise/elementwise_ops.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// `output` must have the broadcast shape of the inputs and elementwise_result_dtype(); throws
// std::invalid_argument otherwise. At most 3 inputs and 8 dims after coalescing.
void record_elementwise(const KernelContext& kc, gpu::CommandRecorder& recorder, const ElementwiseOp& op,
                        std::span<const Tensor> inputs, const Tensor& output,
                        const ElementwiseAttributes& attributes = {});

}  // namespace onda::kernels
