// ONNX Gather (axis, indices of any rank).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// data.shape[:axis] + indices.shape + data.shape[axis+1:].
Shape gather_output_shape(const Shape& data, const Shape& indices, int64_t axis);

// Throws std::out_of_range naming the first index outside [-axis_dim, axis_dim).
void check_gather_indices(std::span<const int64_t> indices, int64_t axis_dim,
                          const std::string& op = "Gather");

// What one Gather moves: shapes and dtypes only, no buffers.
struct GatherProblem {
  Shape data;
  DType dtype = DType::f32;  // of data and output
  Shape indices;
  DType indices_dtype = DType::i64;
  int64_t axis = 0;  // non-negative
  bool operator==(const GatherProblem&) const = default;
};

// A Gather planned once per problem (checks, uniforms but the offsets, pipeline; tensors larger than
// one binding run as slices of the rows before `axis`, each slice shape planned once) and recorded
// per run.
class Gather {
 public:
  // Throws std::invalid_argument for an axis out of range or indices neither int32 nor int64, and
  // std::out_of_range for indices into an empty axis.
  Gather(const KernelContext& kc, GatherProblem problem);
  ~Gather();
  Gather(Gather&&) noexcept;

  const GatherProblem& problem() const { return problem_; }
  const Shape& output_shape() const { return output_shape_; }

  // The tensors must match the problem; `host_indices` as for record_gather below.
  void record(gpu::CommandRecorder& recorder, const Tensor& data, const Tensor& indices, const Tensor& output,
              std::optional<std::span<const int64_t>> host_indices = {}) const;

 private:
  void check_tensors(const Tensor& data, const Tensor& indices, const Tensor& output,
                     std::optional<std::span<const int64_t>> host_indices) const;
  void record_in_slices(gpu::CommandRecorder& recorder, const Tensor& data, const Tensor& indices,
                        const Tensor& output, std::optional<std::span<const int64_t>> host_indices) const;
  const Gather& slice_plan(const Shape& slice_data, const Shape& flat_indices) const;

  KernelContext kc_;
  GatherProblem problem_;
  Shape output_shape_;
  int64_t axis_dim_ = 0, inner_ = 1, count_ = 0;
  const wgpu::ComputePipeline* pipeline_ = nullptr;  // owned by the cache; none for an empty output
  mutable std::vector<std::unique_ptr<Gather>> slice_plans_;
};

// Plans and records in one call. `axis` is non-negative; `indices` is int32 or int64. When the caller knows
// the index values (constants, shapes) it passes them as `host_indices` and out-of-range ones throw;
// otherwise the GPU clamps them into range (ONNX leaves that case undefined).
void record_gather(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& data,
                   const Tensor& indices, int64_t axis, const Tensor& output,
                   std::optional<std::span<const int64_t>> host_indices = {});

}  // namespace onda::kernels
