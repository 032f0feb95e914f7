// ONNX GatherND (batch_dims, index tuples of any length up to the data's rank).
#pragma once
#include <cstdint>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// indices.shape[:-1] + data.shape[batch_dims + q:], q = indices.shape[-1]; throws
// std::invalid_argument when the shapes do not fit.
Shape gather_nd_output_shape(const Shape& data, const Shape& indices, int64_t batch_dims);

// Any dtype of data (bits are moved); int32 / int64 indices, clamped into range on the GPU.
void record_gather_nd(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                      const Tensor& indices, int64_t batch_dims, const Tensor& output);

}  // namespace onda::kernels
