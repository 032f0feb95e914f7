// The graph IR: what a model file becomes before shapes, folding and planning.
//
// Values are named (ONNX's SSA names); nodes refer to their inputs and outputs by name, an empty
// name being an omitted optional input or output. Initializers are constant values held on the
// host (Constant nodes are turned into initializers at load). A subgraph (If/Loop bodies) is a
// Graph held by a node attribute; its nodes may read values of the enclosing graphs by name.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "graph/host_tensor.h"

namespace onda {

class Graph;

// What is known about a value: its dtype and shape may be unknown until shape inference.
struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;
  // Present when the rank is known; a dimension < 0 is unknown (symbolic: see dim_params).
  std::optional<Shape> shape;
  // Same length as *shape when given: the symbolic name of each unknown dimension ("" if none).
  std::vector<std::string> dim_params;

  bool has_static_shape() const;
};

enum class AttributeType { int_, float_, string, ints, floats, strings, tensor, graph };
std::string_view attribute_type_name(AttributeType type);

struct Attribute {
  std::string name;
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
               std::vector<std::string>, HostTensor, std::shared_ptr<const Graph>>
      value;

  // The variant index order above matches AttributeType.
  AttributeType type() const { return static_cast<AttributeType>(value.index()); }
};

struct Node {
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain (ai.onnx)
  std::string name;
  std::vector<std::string> inputs;   // "" = omitted optional input
  std::vector<std::string> outputs;  // "" = omitted optional output
  std::vector<Attribute> attributes;

  const Attribute* find_attribute(std::string_view attribute_name) const;
  bool has_attribute(std::string_view attribute_name) const { return find_attribute(attribute_name); }
  // Sets the attribute, replacing one of that name (what the fusion passes write on the nodes they
  // rewrite).
  void set_attribute(std::string_view attribute_name, decltype(Attribute::value) value);
  // Typed attribute access: the one-argument forms throw ModelError (naming the node) when the
  // attribute is missing or of another type; the two-argument forms return the default if missing.
  int64_t attribute_int(std::string_view attribute_name) const;
  int64_t attribute_int(std::string_view attribute_name, int64_t default_value) const;
  float attribute_float(std::string_view attribute_name) const;
  float attribute_float(std::string_view attribute_name, float default_value) const;
  std::string attribute_string(std::string_view attribute_name) const;
  std::string attribute_string(std::string_view attribute_name, std::string_view default_value) const;
  std::vector<int64_t> attribute_ints(std::string_view attribute_name) const;
  std::vector<int64_t> attribute_ints(std::string_view attribute_name,
                                      std::vector<int64_t> default_value) const;
  std::vector<float> attribute_floats(std::string_view attribute_name) const;
  std::vector<float> attribute_floats(std::string_view attribute_name,
                                      std::vector<float> default_value) const;
  std::vector<std::string> attribute_strings(std::string_view attribute_name) const;
  const HostTensor& attribute_tensor(std::string_view attribute_name) const;
  const Graph& attribute_graph(std::string_view attribute_name) const;

  // "Conv 'name'" (or "Conv (unnamed)") for messages.
  std::string describe() const;
};

struct OpsetImport {
  std::string domain;  // "" = ai.onnx
  int64_t version = 0;
};

class Graph {
 public:
  std::string name;
  int64_t ir_version = 0;                  // of the model file
  std::vector<OpsetImport> opset_imports;  // the model's (subgraphs carry a copy)
  std::vector<std::string> inputs;         // values fed at run time (initializers are not listed)
  std::vector<std::string> outputs;
  std::map<std::string, ValueInfo> values;  // every named value known so far
  std::map<std::string, HostTensor> initializers;
  std::vector<Node> nodes;  // topological order

  const ValueInfo* find_value(std::string_view value_name) const;
  // The entry for a value, created (unknown dtype and shape) if absent.
  ValueInfo& value(const std::string& value_name);
  bool is_initializer(const std::string& value_name) const { return initializers.count(value_name) != 0; }
  const HostTensor* find_initializer(const std::string& value_name) const;
  // Adds (or replaces) an initializer and records its dtype and shape in `values`.
  void set_initializer(const std::string& value_name, HostTensor tensor);

  // Version of an imported opset; "" and "ai.onnx" name the same domain. 0 when not imported.
  int64_t opset_version(std::string_view domain) const;

  // Total bytes of the initializers (this graph only).
  size_t initializer_bytes() const;
  // Nodes in this graph and every subgraph.
  size_t node_count_recursive() const;

  // Reorders nodes so every node follows the producers of its inputs (stable: a sorted graph is
  // unchanged). Throws ModelError naming a value on a cycle or an input nobody produces.
  // `outer_scope`: names visible from enclosing graphs (for subgraphs).
  void sort_topologically(const std::set<std::string>& outer_scope = {});
  // Checks single assignment, that every input is produced before use, that every graph output is
  // produced, recursively into subgraphs. Throws ModelError naming the first problem.
  void validate(const std::set<std::string>& outer_scope = {}) const;
};

// The values a node reads: its inputs and, through its subgraphs, values of enclosing scopes.
std::vector<std::string> values_read_by(const Node& node);

// How the values of a graph are used, as the fusion passes ask: how often each value is read (by
// nodes, through subgraphs, as a graph output), the last node reading it and the node producing it.
// (One hashed entry per value: every fusion pass builds one over the whole graph, and ordered maps,
// then three maps, of string keys were most of a large model's plan time.)
struct ValueUses {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  struct Use {
    int reads = 0;
    size_t reader = kNone;    // the (last) node reading the value, kNone if no node does
    size_t producer = kNone;  // kNone for graph inputs and initializers
  };
  std::unordered_map<std::string, Use> by_value;

  int reads(const std::string& value) const;
  std::optional<size_t> reader(const std::string& value) const;
  std::optional<size_t> producer(const std::string& value) const;
};
ValueUses value_uses(const Graph& graph);

// The node producing `value` when `value` is read exactly once (by one node, not also as a graph
// output or through a subgraph): a producer a fusion may absorb its reader into, or be absorbed by.
std::optional<size_t> producer_read_once(const ValueUses& uses, const std::string& value);

// The node reading `value` when that node is its only reader (not also a graph output or another
// node): a reader a fusion may fold into the value's producer.
std::optional<size_t> sole_reader(const ValueUses& uses, const std::string& value);

// Drops the nodes whose entry in `removed` is set, keeping the order of the others.
void erase_marked_nodes(Graph& graph, const std::vector<bool>& removed);

// "" for both "" and "ai.onnx", so domains compare equal.
std::string_view canonical_domain(std::string_view domain);

// A node of the default ONNX domain with this op type (what the fusion passes match).
bool is_onnx_op(const Node& node, std::string_view op_type);

// A default-domain LSTM, GRU or RNN.
bool is_onnx_recurrent(const Node& node);

// The value's shape when every dim is known, else nullopt.
std::optional<Shape> static_shape_of(const Graph& graph, const std::string& name);

// The value of a one-element float initializer (an epsilon, a scale the passes fold), else nullopt.
std::optional<double> float_scalar_initializer(const Graph& graph, const std::string& name);

// A Reshape (a view: no copy) of `value` as `shape`, for a pass that feeds a value to a reader in
// another shape: its target shape becomes an initializer and its output a value of `dtype` and
// `shape`, named "<value>/onda_<tag>_shape" and "<value>/onda_<tag>_view" (with a numeric suffix where
// taken). The caller places the node before its readers.
Node reshape_view(Graph& graph, const std::string& value, const Shape& shape, DType dtype, const std::string& tag);

// A default-domain MatMul or Gemm whose A and B have static shapes of rank 2 or more: its product's
// shape is then the GEMM's own output shape (no vector operand squeezed away), as the passes that
// rewrite a GEMM's output (its residual, its column parts) need.
bool is_static_matrix_product(const Graph& graph, const Node& node);

}  // namespace onda
