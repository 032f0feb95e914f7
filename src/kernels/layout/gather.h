// ONNX Gather (axis, indices of any rank).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// data.shape[:axis] + indices.shape + data.shape[axis+1:].
Shape gather_output_shape(const Shape& data, const Shape& indices, int64_t axis);

// Throws std::out_of_range naming the first index outside [-axis_dim, axis_dim).
void check_gather_indices(std::span<const int64_t> indices, int64_t axis_dim,
                          const std::string& op = "Gather");

// `axis` is non-negative; `indices` is int32 or int64. When the caller knows the index values
// (constants, shapes) it passes them as `host_indices` and out-of-range ones throw; otherwise the
// GPU clamps them into range (ONNX leaves that case undefined).
void record_gather(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                   const Tensor& indices, int64_t axis, const Tensor& output,
                   std::optional<std::span<const int64_t>> host_indices = {});

}  // namespace onda::kernels
