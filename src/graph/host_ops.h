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

// The output of Shape (with opset-15 start/end) for an input of static shape `input_shape`.
HostTensor shape_op_result(const Node& node, const Shape& input_shape);

// The one element of a scalar-like input (Range's start, STFT's frame_step, ...); ModelError
// naming `what` when the tensor does not hold exactly one element.
int64_t single_int64(const HostTensor& tensor, const std::string& what);
double single_double(const HostTensor& tensor, const std::string& what);

// Output shapes shared by folding and shape inference (ModelError naming the node when invalid).
Shape reshape_output_shape(const Node& node, const Shape& input_shape, const std::vector<int64_t>& requested);
// `axes` absent or empty: every dimension of size 1.
Shape squeeze_output_shape(const Node& node, const Shape& input_shape,
                           const std::optional<std::vector<int64_t>>& axes);
Shape unsqueeze_output_shape(const Node& node, const Shape& input_shape, const std::vector<int64_t>& axes);

struct SliceParameters {
  std::vector<int64_t> starts, ends, axes, steps;  // axes, steps may be empty (defaults)
};
struct SliceRegion {
  Shape shape;                 // of the output
  std::vector<int64_t> first;  // per input axis: first index read
  std::vector<int64_t> step;   // per input axis: step
};
SliceRegion slice_region(const Node& node, const Shape& input_shape, SliceParameters parameters);

}  // namespace onda
