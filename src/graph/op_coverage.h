// Which ops of a graph the engine cannot run: every (domain, op type, node) at once, so a user
// sees the whole list in one error instead of discovering ops one run at a time.
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "graph/graph.h"

namespace onda {

struct UnsupportedOp {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  std::string node_name;  // for a node in a subgraph: "<parent node>/<attribute>/<node>"
};

// Answers whether (domain, op_type) at the model's opset version for that domain is supported;
// domain is canonical ("" for ai.onnx).
using OpSupport =
    std::function<bool(std::string_view domain, std::string_view op_type, int64_t opset_version)>;

// Every node (subgraphs included, in graph order) whose op is not supported.
std::vector<UnsupportedOp> find_unsupported_ops(const Graph& graph, const OpSupport& is_supported);
// Same, with the supported ops as (domain, op_type) pairs; "" and "ai.onnx" are the same domain.
std::vector<UnsupportedOp> find_unsupported_ops(
    const Graph& graph, const std::set<std::pair<std::string, std::string>>& supported);

// One message for all of them, grouped by op: "2 unsupported op types (3 nodes): ai.onnx::STFT x1
// (stft_0); com.example::Foo x2 (a, b)". At most `names_per_op` node names are listed per op.
std::string describe_unsupported_ops(const std::vector<UnsupportedOp>& unsupported, size_t names_per_op = 5);

}  // namespace onda
