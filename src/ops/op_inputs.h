// Reading node inputs that must be known before the run (shapes, axes, pads, repeats): they are
// host values (initializers, folded shape arithmetic, small integer graph inputs).
#pragma once
#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "graph/model_error.h"
#include "graph/graph.h"
#include "ops/op_value.h"

namespace onda::ops {

inline const Value& input_or_empty(const std::vector<Value>& inputs, size_t index) {
  static const Value empty;
  return index < inputs.size() ? inputs[index] : empty;
}

// The integer values of a constant input; throws ModelError naming the node when it is missing
// or only known on the GPU.
inline std::vector<int64_t> constant_ints(const Node& node, const Value& v, const char* what) {
  if (!v.defined()) throw ModelError(fmt::format("{}: missing input '{}'", node.describe(), what));
  if (!v.on_host()) {
    throw ModelError(fmt::format("{}: input '{}' must be a constant (known before the run)", node.describe(), what));
  }
  return v.host.to_int64();
}

inline std::optional<std::vector<int64_t>> optional_constant_ints(const Node& node, const Value& v, const char* what) {
  if (!v.defined()) return std::nullopt;
  return constant_ints(node, v, what);
}

inline std::vector<double> constant_doubles(const Node& node, const Value& v, const char* what) {
  if (!v.defined()) throw ModelError(fmt::format("{}: missing input '{}'", node.describe(), what));
  if (!v.on_host()) {
    throw ModelError(fmt::format("{}: input '{}' must be a constant (known before the run)", node.describe(), what));
  }
  return v.host.to_double();
}

// Runs a kernel call, turning its std::invalid_argument / std::out_of_range (the kernels' way of
// rejecting bad shapes, parameters and host-known indices) into a ModelError that names the node.
template <typename F>
void rethrow_naming_node(const Node& node, F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  } catch (const std::out_of_range& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
}

inline int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    throw ModelError(fmt::format("{}: axis {} out of range for rank {}", node.describe(), axis, rank));
  }
  return axis < 0 ? axis + rank : axis;
}

}  // namespace onda::ops
