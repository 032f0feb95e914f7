// ONNX ScatterElements (and the deprecated Scatter): data with updates written (or folded with a
// reduction) at per-element indices along one axis.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class ScatterReduction { None, Add, Mul, Max, Min };

// output = data with output[c with c[axis] := indices[c]] = updates[c] (None: the last such update
// in index order; the others fold every one in). f32/f16 data; updates has the indices' shape,
// not above data's off the axis; `output` must not be `data`. With `host_indices`, out-of-range
// ones throw std::out_of_range; on the GPU they match nothing.
void record_scatter_elements(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                             const Tensor& indices, const Tensor& updates, int64_t axis,
                             ScatterReduction reduction, const Tensor& output,
                             std::optional<std::span<const int64_t>> host_indices = {});

}  // namespace onda::kernels
