// What the one-node elementwise ops (elementwise_ops.cpp) and the fused groups
// (fused_elementwise_op.cpp, graph/fuse_elementwise.h) share: the kernel op and attributes an ONNX
// node stands for, and the recording of an elementwise dispatch over slices of the leading
// dimension when a tensor is larger than one storage binding.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "graph/graph.h"
#include "kernels/elementwise/elementwise_ops.h"
#include "ops/op_context.h"

namespace onda::ops {

struct ElementwiseCall {
  kernels::ElementwiseOp op = kernels::ElementwiseOp::Identity;
  kernels::ElementwiseAttributes attributes;
};

// The kernel op of a one-op ONNX elementwise node (Relu ... BitShift, not Cast, Clip's bounds or
// the variadic ops) from its op type and attributes; `first_input` picks BitShift's 16-bit form.
// ModelError naming the node for an unknown op or attribute value.
ElementwiseCall elementwise_call_of(const Node& node, DType first_input);

// Calls record(inputs, output) once, or per slice of the output's leading dimension (leading dims
// of 1 dropped first) when the output or an input of its rank is larger than one storage binding:
// inputs of the output's rank and leading dimension are sliced with it, the others passed whole.
using ElementwiseRecord = std::function<void(std::span<const Tensor> inputs, const Tensor& output)>;
void record_in_binding_slices(OpContext& context, std::vector<Tensor> inputs, const Tensor& output,
                              const ElementwiseRecord& record);

}  // namespace onda::ops
