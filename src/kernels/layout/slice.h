// ONNX Slice (opset 13) and the region copies built on the same index map: Concat and Split.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/kernel_context.h"
#include "kernels/layout/index_map.h"
#include "tensor/tensor.h"

namespace onda::kernels {

// One input dim of a slice after ONNX normalisation: output element c reads input start + c * step.
struct SliceDim {
  int64_t start = 0;
  int64_t step = 1;
  int64_t size = 0;
};

// ONNX Slice semantics: negative starts/ends count from the end; starts/ends are clamped to
// [0, dim] for positive steps and [0, dim-1] / [-1, dim-1] for negative ones; axes may be negative;
// missing axes are 0..n-1, missing steps 1. Throws std::invalid_argument on a zero step, a repeated
// or out-of-range axis, or mismatched lengths. Returns one SliceDim per input dim.
std::vector<SliceDim> plan_slice(const Shape& input, std::span<const int64_t> starts,
                                 std::span<const int64_t> ends, std::span<const int64_t> axes = {},
                                 std::span<const int64_t> steps = {});
Shape slice_output_shape(std::span<const SliceDim> dims);

// The index maps of Slice (one), Concat (one per input) and Split (one per output), checking the
// shapes as the record functions below say (std::invalid_argument); LayoutPlan builds on them.
IndexMap slice_map(const Shape& input, std::span<const SliceDim> dims, const Shape& output);
std::vector<IndexMap> concat_maps(std::span<const Shape> inputs, int64_t axis, const Shape& output);
std::vector<IndexMap> split_maps(const Shape& input, int64_t axis, std::span<const Shape> outputs);

// `dims` has one entry per input dim (from plan_slice, or any in-range start/step/size); `output`
// has shape slice_output_shape(dims) and the input's dtype.
void record_slice(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                  std::span<const SliceDim> dims, const Tensor& output);

// ONNX Concat along a non-negative `axis`: one dispatch per non-empty input, each writing its slab.
void record_concat(const KernelContext& kc, gpu::CommandRecorder& recorder, std::span<const Tensor> inputs,
                   int64_t axis, const Tensor& output);

// ONNX Split along a non-negative `axis`: the outputs' extents along `axis` are the split sizes and
// must sum to the input's.
void record_split(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input, int64_t axis,
                  std::span<const Tensor> outputs);

}  // namespace onda::kernels
