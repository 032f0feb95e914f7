// Output shapes of the layout ops (Shape, Reshape, Squeeze, Unsqueeze, Slice) from their input
// shape and parameters, per the ONNX specs: shared by constant folding (host_ops) and static shape
// inference, so both agree by construction.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/host_tensor.h"

namespace onda {

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
