// ONNX GatherElements (and the read half of ScatterElements' callers): per-element indices along
// one axis.
#pragma once
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// output[c] = data[c with c[axis] := indices[c]]; `output` has the indices' shape, which must not
// exceed data's on the other dims. `axis` is non-negative; indices are int32 or int64; any dtype of
// data (bits are moved). With `host_indices`, out-of-range ones throw std::out_of_range; otherwise
// the GPU clamps them.
void record_gather_elements(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                            const Tensor& indices, int64_t axis, const Tensor& output,
                            std::optional<std::span<const int64_t>> host_indices = {});

}  // namespace onda::kernels
