// Host implementations of the small ops that compute shapes and indices inside exported graphs
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains, Range, ConstantOfShape, Slice,
// integer arithmetic, ...). Constant folding evaluates them once at load, so the GPU sees only the
// tensor work. Semantics follow the ONNX operator specs (opset 1..18 forms: axes, pads, splits as
// attributes or inputs).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/host_tensor.h"

namespace onda {

// Inputs: one per node input, an omitted optional input as an undefined HostTensor. Returns one
// tensor per node output. Throws ModelError (naming the node) on invalid inputs.
using HostOp = std::vector<HostTensor> (*)(const Node& node, const std::vector<HostTensor>& inputs);

// The host implementation of a default-domain op, or null.
HostOp find_host_op(std::string_view op_type);

// Ops whose result shares the input's bytes (Identity, Reshape, Squeeze, Unsqueeze, Flatten): free
// to fold at any size.
bool is_view_op(std::string_view op_type);

}  // namespace onda
