#include "graph/op_coverage.h"

#include <map>

namespace onda {

namespace {

void collect(const Graph& graph, const OpSupport& is_supported, const std::string& prefix,
             std::vector<UnsupportedOp>& out) {
  for (const Node& node : graph.nodes) {
    const std::string_view domain = canonical_domain(node.domain);
    const std::string node_name = prefix + (node.name.empty() ? "(unnamed " + node.op_type + ")" : node.name);
    if (!is_supported(domain, node.op_type, graph.opset_version(domain)))
      out.push_back({std::string(domain), node.op_type, node_name});
    for (const Attribute& attribute : node.attributes)
      if (attribute.type() == AttributeType::graph)
        collect(*std::get<std::shared_ptr<const Graph>>(attribute.value), is_supported,
                node_name + "/" + attribute.name + "/", out);
  }
}

}  // namespace

std::vector<UnsupportedOp> find_unsupported_ops(const Graph& graph, const OpSupport& is_supported) {
  std::vector<UnsupportedOp> out;
  collect(graph, is_supported, "", out);
  return out;
}

std::vector<UnsupportedOp> find_unsupported_ops(
    const Graph& graph, const std::set<std::pair<std::string, std::string>>& supported) {
  std::set<std::pair<std::string, std::string>> canonical;
  for (const auto& [domain, op_type] : supported) canonical.emplace(canonical_domain(domain), op_type);
  return find_unsupported_ops(graph, [&](std::string_view domain, std::string_view op_type, int64_t) {
    return canonical.count({std::string(domain), std::string(op_type)}) != 0;
  });
}

std::string describe_unsupported_ops(const std::vector<UnsupportedOp>& unsupported, size_t names_per_op) {
  if (unsupported.empty()) return "all ops are supported";
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_op;
  for (const UnsupportedOp& op : unsupported) by_op[{op.domain, op.op_type}].push_back(op.node_name);
  std::string text = std::to_string(by_op.size()) + " unsupported op type" + (by_op.size() == 1 ? "" : "s") +
                     " (" + std::to_string(unsupported.size()) + " node" +
                     (unsupported.size() == 1 ? "" : "s") + "):";
  bool first = true;
  for (const auto& [op, names] : by_op) {
    text += first ? " " : "; ";
    first = false;
    text += (op.first.empty() ? std::string("ai.onnx") : op.first) + "::" + op.second + " x" +
            std::to_string(names.size()) + " (";
    for (size_t i = 0; i < names.size() && i < names_per_op; ++i) text += (i ? ", " : "") + names[i];
    if (names.size() > names_per_op) text += ", ...";
    text += ")";
  }
  return text;
}

}  // namespace onda
