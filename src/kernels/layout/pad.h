// ONNX Pad (opset 19 modes: constant, reflect, edge, wrap) over any rank; negative pads crop.
#pragma once
#include <cstdint>
#include <span>

#include "kernels/kernel_context.h"
#include "kernels/layout/index_map.h"
#include "tensor/tensor.h"

namespace onda::kernels {

enum class PadMode { Constant, Reflect, Edge, Wrap };

// ONNX layout of `pads`: [x1_begin, x2_begin, ..., x1_end, x2_end, ...], one pair per input dim
// (the op layer expands the optional `axes` input). Output dim d = in[d] + begin[d] + end[d].
Shape pad_output_shape(const Shape& input, std::span<const int64_t> pads);

// The index map of a Pad, checking its arguments as record_pad says (the pad value as `dtype` stores it).
IndexMap pad_map(const Shape& input, DType dtype, std::span<const int64_t> pads, PadMode mode, double value,
                 const Shape& output);

// `value` is the Constant mode's fill, converted to the tensor's dtype. As the ONNX reference does,
// negative pads crop first and the positive ones pad what is left: Edge and Wrap need something
// left along a padded dim, Reflect needs pads <= (cropped length - 1); otherwise
// std::invalid_argument. Wrap past one period wraps again (numpy's rule).
void record_pad(const KernelContext& kc, gpu::CommandRecorder& recorder, const Tensor& input,
                std::span<const int64_t> pads, PadMode mode, double value, const Tensor& output);

}  // namespace onda::kernels
