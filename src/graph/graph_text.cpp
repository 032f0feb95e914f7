#include "graph/graph_text.h"

#include <sstream>

namespace onda {

namespace {

std::string type_text(const ValueInfo* info) {
  if (!info || !info->dtype) return "";
  std::string text = ": " + std::string(dtype_name(*info->dtype));
  if (info->shape) {
    text += "[";
    for (size_t i = 0; i < info->shape->size(); ++i) {
      if (i) text += ", ";
      const int64_t dim = (*info->shape)[i];
      const std::string& param = i < info->dim_params.size() ? info->dim_params[i] : std::string();
      text += dim >= 0 ? std::to_string(dim) : (param.empty() ? "?" : param);
    }
    text += "]";
  }
  return text;
}

std::string value_text(const Graph& graph, const std::string& name, bool with_type) {
  if (name.empty()) return "<none>";
  const std::string sigil = graph.is_initializer(name) ? "$" : "%";
  return sigil + name + (with_type ? type_text(graph.find_value(name)) : "");
}

template <typename T>
std::string list_text(const std::vector<T>& values) {
  std::ostringstream text;
  text << "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) text << ", ";
    if (i == 16) {
      text << "... (" << values.size() << ")";
      break;
    }
    if constexpr (std::is_same_v<T, std::string>)
      text << '"' << values[i] << '"';
    else
      text << values[i];
  }
  text << "]";
  return text.str();
}

void append_graph(std::string& out, const Graph& graph, size_t max_nodes, const std::string& indent) {
  out += indent + "inputs:";
  // Appending piecewise: GCC 12 reports a false -Wrestrict on `" " + std::string`.
  for (const std::string& input : graph.inputs) out.append(" ").append(value_text(graph, input, true));
  out += "\n" + indent + "outputs:";
  for (const std::string& output : graph.outputs) out.append(" ").append(value_text(graph, output, true));
  out += "\n" + indent + "initializers: " + std::to_string(graph.initializers.size()) + " (" +
         std::to_string(graph.initializer_bytes()) + " bytes)\n";
  size_t printed = 0;
  for (const Node& node : graph.nodes) {
    if (printed++ == max_nodes) {
      out += indent + "... " + std::to_string(graph.nodes.size() - max_nodes) + " more nodes\n";
      break;
    }
    std::string line = indent;
    for (size_t i = 0; i < node.outputs.size(); ++i)
      line += (i ? ", " : "") + value_text(graph, node.outputs[i], true);
    line += " = " + (node.domain.empty() ? std::string() : node.domain + "::") + node.op_type + "(";
    for (size_t i = 0; i < node.inputs.size(); ++i)
      line += (i ? ", " : "") + value_text(graph, node.inputs[i], false);
    line += ")";
    std::vector<const Graph*> subgraphs;
    if (!node.attributes.empty()) {
      line += " {";
      for (size_t i = 0; i < node.attributes.size(); ++i) {
        line += (i ? ", " : "") + node.attributes[i].name + ": " + attribute_to_text(node.attributes[i]);
        if (node.attributes[i].type() == AttributeType::graph)
          subgraphs.push_back(std::get<std::shared_ptr<const Graph>>(node.attributes[i].value).get());
      }
      line += "}";
    }
    if (!node.name.empty()) line += "   # " + node.name;
    out += line + "\n";
    for (const Graph* subgraph : subgraphs) append_graph(out, *subgraph, max_nodes, indent + "    ");
  }
}

}  // namespace

std::string attribute_to_text(const Attribute& attribute) {
  switch (attribute.type()) {
    case AttributeType::int_:
      return std::to_string(std::get<int64_t>(attribute.value));
    case AttributeType::float_: {
      std::ostringstream text;
      text << std::get<float>(attribute.value);
      return text.str();
    }
    case AttributeType::string:
      return '"' + std::get<std::string>(attribute.value) + '"';
    case AttributeType::ints:
      return list_text(std::get<std::vector<int64_t>>(attribute.value));
    case AttributeType::floats:
      return list_text(std::get<std::vector<float>>(attribute.value));
    case AttributeType::strings:
      return list_text(std::get<std::vector<std::string>>(attribute.value));
    case AttributeType::tensor: {
      const HostTensor& tensor = std::get<HostTensor>(attribute.value);
      return "tensor " + std::string(dtype_name(tensor.dtype())) + shape_to_string(tensor.shape());
    }
    case AttributeType::graph: {
      const Graph& graph = *std::get<std::shared_ptr<const Graph>>(attribute.value);
      return "graph '" + graph.name + "' (" + std::to_string(graph.nodes.size()) + " nodes)";
    }
  }
  return "?";
}

std::string graph_to_text(const Graph& graph, size_t max_nodes) {
  std::string out;
  append_graph(out, graph, max_nodes, "");
  return out;
}

}  // namespace onda
