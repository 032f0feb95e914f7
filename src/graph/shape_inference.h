// Static shape inference: the dtype and shape of each op's outputs from those of its inputs and the
// values of its constant inputs (Reshape's shape, Slice's starts, Pad's pads, ...), following the
// ONNX operator specs. Only fully static shapes are produced: the runtime binds concrete input
// shapes first, so every dimension is a number.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "graph/graph.h"
#include "graph/host_tensor.h"

namespace onda {

struct TensorType {
  DType dtype;
  Shape shape;
  bool operator==(const TensorType&) const = default;
};

// One entry per node output (nullopt where not inferred, e.g. an omitted optional output). Empty
// when the op has no rule or an input it needs is unknown (a type, or the value of an input that
// must be constant). `input_types` and `constant_inputs` have one entry per node input.
// Throws ModelError (naming the node) when the inputs contradict the op (shapes that do not
// broadcast, a reshape that changes the element count, ...).
std::vector<std::optional<TensorType>> infer_output_types(
    const Node& node, const std::vector<std::optional<TensorType>>& input_types,
    const std::vector<const HostTensor*>& constant_inputs);

// Whether infer_output_types knows the op (default domain).
bool has_shape_rule(std::string_view op_type);

}  // namespace onda
