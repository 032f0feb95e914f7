#include "graph/graph.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

#include "graph/model_error.h"

namespace onda {

bool ValueInfo::has_static_shape() const {
  if (!shape) return false;
  for (int64_t dim : *shape)
    if (dim < 0) return false;
  return true;
}

std::string_view attribute_type_name(AttributeType type) {
  switch (type) {
    case AttributeType::int_:
      return "int";
    case AttributeType::float_:
      return "float";
    case AttributeType::string:
      return "string";
    case AttributeType::ints:
      return "ints";
    case AttributeType::floats:
      return "floats";
    case AttributeType::strings:
      return "strings";
    case AttributeType::tensor:
      return "tensor";
    case AttributeType::graph:
      return "graph";
  }
  return "?";
}

std::string_view canonical_domain(std::string_view domain) {
  return domain == "ai.onnx" ? "" : domain;
}

bool is_onnx_op(const Node& node, std::string_view op_type) {
  return canonical_domain(node.domain).empty() && node.op_type == op_type;
}

bool is_onnx_recurrent(const Node& node) {
  return is_onnx_op(node, "LSTM") || is_onnx_op(node, "GRU") || is_onnx_op(node, "RNN");
}

bool is_static_matrix_product(const Graph& graph, const Node& node) {
  if ((!is_onnx_op(node, "MatMul") && !is_onnx_op(node, "Gemm")) || node.inputs.size() < 2) return false;
  for (size_t k : {size_t{0}, size_t{1}}) {
    const std::optional<Shape> s = static_shape_of(graph, node.inputs[k]);
    if (!s || s->size() < 2) return false;
  }
  return true;
}

std::optional<Shape> static_shape_of(const Graph& graph, const std::string& name) {
  const ValueInfo* info = graph.find_value(name);
  if (!info || !info->shape) return std::nullopt;
  for (int64_t d : *info->shape)
    if (d < 0) return std::nullopt;
  return info->shape;
}

std::optional<double> float_scalar_initializer(const Graph& graph, const std::string& name) {
  const HostTensor* t = graph.find_initializer(name);
  if (!t || t->numel() != 1 || !is_float(t->dtype())) return std::nullopt;
  return t->to_double()[0];
}

namespace {

// A name no value of `graph` has yet: `base`, or `base` with a numeric suffix.
std::string unused_name(const Graph& graph, const std::string& base) {
  std::string name = base;
  for (int k = 1; graph.find_value(name) || graph.is_initializer(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

}  // namespace

Node reshape_view(Graph& graph, const std::string& value, const Shape& shape, DType dtype, const std::string& tag) {
  const std::string shape_name = unused_name(graph, value + "/onda_" + tag + "_shape");
  graph.set_initializer(shape_name,
                        HostTensor::from_values<int64_t>({static_cast<int64_t>(shape.size())}, shape));
  const std::string view = unused_name(graph, value + "/onda_" + tag + "_view");
  ValueInfo& info = graph.value(view);
  info.dtype = dtype;
  info.shape = shape;
  Node node;
  node.op_type = "Reshape";
  node.name = view;
  node.inputs = {value, shape_name};
  node.outputs = {view};
  return node;
}

// ---- Node attributes

std::string Node::describe() const {
  return op_type + (name.empty() ? std::string(" (unnamed)") : " '" + name + "'");
}

const Attribute* Node::find_attribute(std::string_view attribute_name) const {
  for (const Attribute& attribute : attributes)
    if (attribute.name == attribute_name) return &attribute;
  return nullptr;
}

void Node::set_attribute(std::string_view attribute_name, decltype(Attribute::value) value) {
  for (Attribute& attribute : attributes) {
    if (attribute.name == attribute_name) {
      attribute.value = std::move(value);
      return;
    }
  }
  attributes.push_back(Attribute{std::string(attribute_name), std::move(value)});
}

namespace {

template <typename T>
const T& required_attribute(const Node& node, std::string_view attribute_name, AttributeType expected) {
  const Attribute* attribute = node.find_attribute(attribute_name);
  if (!attribute)
    throw ModelError(node.describe() + ": missing attribute '" + std::string(attribute_name) + "'");
  if (attribute->type() != expected)
    throw ModelError(node.describe() + ": attribute '" + std::string(attribute_name) + "' is " +
                     std::string(attribute_type_name(attribute->type())) + ", expected " +
                     std::string(attribute_type_name(expected)));
  return std::get<T>(attribute->value);
}

}  // namespace

int64_t Node::attribute_int(std::string_view n) const {
  return required_attribute<int64_t>(*this, n, AttributeType::int_);
}
int64_t Node::attribute_int(std::string_view n, int64_t default_value) const {
  return has_attribute(n) ? attribute_int(n) : default_value;
}
float Node::attribute_float(std::string_view n) const {
  return required_attribute<float>(*this, n, AttributeType::float_);
}
float Node::attribute_float(std::string_view n, float default_value) const {
  return has_attribute(n) ? attribute_float(n) : default_value;
}
std::string Node::attribute_string(std::string_view n) const {
  return required_attribute<std::string>(*this, n, AttributeType::string);
}
std::string Node::attribute_string(std::string_view n, std::string_view default_value) const {
  return has_attribute(n) ? attribute_string(n) : std::string(default_value);
}
std::vector<int64_t> Node::attribute_ints(std::string_view n) const {
  return required_attribute<std::vector<int64_t>>(*this, n, AttributeType::ints);
}
std::vector<int64_t> Node::attribute_ints(std::string_view n, std::vector<int64_t> default_value) const {
  return has_attribute(n) ? attribute_ints(n) : default_value;
}
std::vector<float> Node::attribute_floats(std::string_view n) const {
  return required_attribute<std::vector<float>>(*this, n, AttributeType::floats);
}
std::vector<float> Node::attribute_floats(std::string_view n, std::vector<float> default_value) const {
  return has_attribute(n) ? attribute_floats(n) : default_value;
}
std::vector<std::string> Node::attribute_strings(std::string_view n) const {
  return required_attribute<std::vector<std::string>>(*this, n, AttributeType::strings);
}
const HostTensor& Node::attribute_tensor(std::string_view n) const {
  return required_attribute<HostTensor>(*this, n, AttributeType::tensor);
}
const Graph& Node::attribute_graph(std::string_view n) const {
  return *required_attribute<std::shared_ptr<const Graph>>(*this, n, AttributeType::graph);
}

// ---- Graph

const ValueInfo* Graph::find_value(std::string_view value_name) const {
  auto found = values.find(std::string(value_name));
  return found == values.end() ? nullptr : &found->second;
}

ValueInfo& Graph::value(const std::string& value_name) {
  ValueInfo& info = values[value_name];
  info.name = value_name;
  return info;
}

const HostTensor* Graph::find_initializer(const std::string& value_name) const {
  auto found = initializers.find(value_name);
  return found == initializers.end() ? nullptr : &found->second;
}

void Graph::set_initializer(const std::string& value_name, HostTensor tensor) {
  ValueInfo& info = value(value_name);
  info.dtype = tensor.dtype();
  info.shape = tensor.shape();
  info.dim_params.assign(tensor.shape().size(), "");
  initializers[value_name] = std::move(tensor);
}

int64_t Graph::opset_version(std::string_view domain) const {
  for (const OpsetImport& opset : opset_imports)
    if (canonical_domain(opset.domain) == canonical_domain(domain)) return opset.version;
  return 0;
}

size_t Graph::initializer_bytes() const {
  size_t total = 0;
  for (const auto& [name, tensor] : initializers) total += tensor.byte_size();
  return total;
}

size_t Graph::node_count_recursive() const {
  size_t count = nodes.size();
  for (const Node& node : nodes)
    for (const Attribute& attribute : node.attributes)
      if (attribute.type() == AttributeType::graph)
        count += std::get<std::shared_ptr<const Graph>>(attribute.value)->node_count_recursive();
  return count;
}

namespace {

// Names available before any node runs: outer scope, graph inputs, initializers.
std::set<std::string> names_defined_at_entry(const Graph& graph, const std::set<std::string>& outer_scope) {
  std::set<std::string> defined = outer_scope;
  defined.insert(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, tensor] : graph.initializers) defined.insert(name);
  return defined;
}

bool has_subgraph(const Node& node) {
  return std::any_of(node.attributes.begin(), node.attributes.end(),
                     [](const Attribute& a) { return a.type() == AttributeType::graph; });
}

// Values a subgraph reads from enclosing scopes (recursively), which its parent node depends on.
void collect_outer_reads(const Graph& graph, std::set<std::string>& reads) {
  std::set<std::string> local(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, tensor] : graph.initializers) local.insert(name);
  for (const Node& node : graph.nodes) {
    for (const std::string& input : node.inputs)
      if (!input.empty() && !local.count(input)) reads.insert(input);
    for (const Attribute& attribute : node.attributes)
      if (attribute.type() == AttributeType::graph) {
        std::set<std::string> inner;
        collect_outer_reads(*std::get<std::shared_ptr<const Graph>>(attribute.value), inner);
        for (const std::string& name : inner)
          if (!local.count(name)) reads.insert(name);
      }
    local.insert(node.outputs.begin(), node.outputs.end());
  }
}

}  // namespace

int ValueUses::reads(const std::string& value) const {
  const auto it = by_value.find(value);
  return it == by_value.end() ? 0 : it->second.reads;
}

std::optional<size_t> ValueUses::reader(const std::string& value) const {
  const auto it = by_value.find(value);
  if (it == by_value.end() || it->second.reader == kNone) return std::nullopt;
  return it->second.reader;
}

std::optional<size_t> ValueUses::producer(const std::string& value) const {
  const auto it = by_value.find(value);
  if (it == by_value.end() || it->second.producer == kNone) return std::nullopt;
  return it->second.producer;
}

ValueUses value_uses(const Graph& graph) {
  ValueUses uses;
  uses.by_value.reserve(graph.values.size() + graph.initializers.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    auto count = [&](const std::string& name) {
      ValueUses::Use& use = uses.by_value[name];
      ++use.reads;
      use.reader = i;
    };
    if (has_subgraph(node)) {
      for (const std::string& name : values_read_by(node)) count(name);
    } else {  // the inputs, each once, without values_read_by's sorted copy
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const std::string& name = node.inputs[k];
        if (!name.empty() && std::find(node.inputs.begin(), node.inputs.begin() + k, name) == node.inputs.begin() + k)
          count(name);
      }
    }
    for (const std::string& name : node.outputs) uses.by_value[name].producer = i;
  }
  for (const std::string& name : graph.outputs) ++uses.by_value[name].reads;
  return uses;
}

std::optional<size_t> producer_read_once(const ValueUses& uses, const std::string& value) {
  const auto it = uses.by_value.find(value);
  if (it == uses.by_value.end() || it->second.reads != 1 || it->second.producer == ValueUses::kNone)
    return std::nullopt;
  return it->second.producer;
}

std::optional<size_t> sole_reader(const ValueUses& uses, const std::string& value) {
  const auto it = uses.by_value.find(value);
  if (it == uses.by_value.end() || it->second.reads != 1 || it->second.reader == ValueUses::kNone)
    return std::nullopt;
  return it->second.reader;
}

void erase_marked_nodes(Graph& graph, const std::vector<bool>& removed) {
  if (std::find(removed.begin(), removed.end(), true) == removed.end()) return;
  std::vector<Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
}

std::vector<std::string> values_read_by(const Node& node) {
  if (!has_subgraph(node)) {  // the common case, without building a set: the inputs, sorted, once each
    std::vector<std::string> reads;
    reads.reserve(node.inputs.size());
    for (const std::string& name : node.inputs)
      if (!name.empty()) reads.push_back(name);
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    return reads;
  }
  std::set<std::string> reads(node.inputs.begin(), node.inputs.end());
  for (const Attribute& attribute : node.attributes)
    if (attribute.type() == AttributeType::graph)
      collect_outer_reads(*std::get<std::shared_ptr<const Graph>>(attribute.value), reads);
  reads.erase("");
  return {reads.begin(), reads.end()};
}

void Graph::sort_topologically(const std::set<std::string>& outer_scope) {
  const std::set<std::string> defined = names_defined_at_entry(*this, outer_scope);
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& output : nodes[i].outputs)
      if (!output.empty()) producer.emplace(output, i);

  // Kahn's algorithm with the smallest original index first, so a sorted graph keeps its order.
  std::vector<size_t> waiting_on(nodes.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const std::string& input : values_read_by(nodes[i])) {
      auto found = producer.find(input);
      if (found != producer.end()) {
        ++waiting_on[i];
        consumers[found->second].push_back(i);
      } else if (!defined.count(input)) {
        throw ModelError("node " + nodes[i].describe() + " reads value '" + input +
                         "', which no node, graph input or initializer provides");
      }
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (waiting_on[i] == 0) ready.push(i);
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  while (!ready.empty()) {
    const size_t i = ready.top();
    ready.pop();
    for (size_t consumer : consumers[i])
      if (--waiting_on[consumer] == 0) ready.push(consumer);
    sorted.push_back(std::move(nodes[i]));
  }
  if (sorted.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (waiting_on[i] != 0) throw ModelError("the graph has a cycle through node " + nodes[i].describe());
  }
  nodes = std::move(sorted);
}

void Graph::validate(const std::set<std::string>& outer_scope) const {
  std::set<std::string> defined = names_defined_at_entry(*this, outer_scope);
  std::set<std::string> produced;
  for (const std::string& input : inputs)
    if (initializers.count(input)) throw ModelError("graph input '" + input + "' is also an initializer");
  for (const Node& node : nodes) {
    for (const std::string& input : node.inputs)
      if (!input.empty() && !defined.count(input))
        throw ModelError("node " + node.describe() + " reads value '" + input +
                         "' before any node, graph input or initializer provides it");
    for (const Attribute& attribute : node.attributes)
      if (attribute.type() == AttributeType::graph)
        std::get<std::shared_ptr<const Graph>>(attribute.value)->validate(defined);
    for (const std::string& output : node.outputs) {
      if (output.empty()) continue;
      if (produced.count(output) || initializers.count(output) ||
          std::find(inputs.begin(), inputs.end(), output) != inputs.end())
        throw ModelError("value '" + output + "' is assigned twice (again by node " + node.describe() + ")");
      produced.insert(output);
      defined.insert(output);
    }
  }
  for (const std::string& output : outputs)
    if (!defined.count(output)) throw ModelError("graph output '" + output + "' is not produced by any node");
}

}  // namespace onda
