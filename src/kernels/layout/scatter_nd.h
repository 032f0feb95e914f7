// ONNX ScatterND (reduction none), as HTDemucs builds its 2-D position embedding with it.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// output = data, then output[indices[i]] = updates[i] for every index tuple i (the last dim of
// `indices`, q <= rank(data), is the tuple length; updates has shape indices.shape[:-1] +
// data.shape[q:]). Two passes: a copy of data (skipped when `output` is `data` itself) and the
// scatter. Duplicate index tuples leave one of the updates (undefined order, as ONNX says).
// With `host_indices` out-of-range tuples throw std::out_of_range; without, the GPU skips them.
void record_scatter_nd(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                       const Tensor& indices, const Tensor& updates, const Tensor& output,
                       std::optional<std::span<const int64_t>> host_indices = {});

}  // namespace onda::kernels
