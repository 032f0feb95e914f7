#include "onnx/onnx_loader.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h (ONNX_ML=1)

#include <fstream>
#include <map>
#include <set>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "onnx/external_data.h"
#include "onnx/function_inlining.h"
#include "onnx/tensor_proto.h"

namespace onda {

namespace {

using onnx_format::ExternalDataFiles;
using onnx_format::tensor_from_proto;

struct LoadContext {
  ExternalDataFiles* external;
  const OnnxLoadOptions& options;
  std::vector<OpsetImport> opset_imports;
  int64_t ir_version;
  int subgraph_depth = 0;  // 0 while reading the main graph
};

std::string read_file(const std::filesystem::path& path, const char* kind) {
  if (std::filesystem::is_directory(path))
    throw ModelError(std::string("cannot read ") + kind + " '" + path.string() + "': it is a directory");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ModelError(std::string("cannot open ") + kind + " '" + path.string() + "'");
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw ModelError(std::string("read error in ") + kind + " '" + path.string() + "'");
  return bytes;
}

// Type and shape of a graph input, output or value_info entry. Only tensors are supported at the
// model's boundary; inside it (value_info, subgraph inputs and outputs) sequences and optionals are
// values of the runtime (ops::Value::sequence), recorded here without a type.
ValueInfo value_info_from_proto(const onnx::ValueInfoProto& proto, const std::string& role,
                                bool containers_allowed = false) {
  ValueInfo info;
  info.name = proto.name();
  if (!proto.has_type()) return info;
  const onnx::TypeProto& type = proto.type();
  if (containers_allowed && (type.has_sequence_type() || type.has_optional_type())) return info;
  if (type.value_case() != onnx::TypeProto::kTensorType) {
    const char* kind = type.has_sequence_type()        ? "a sequence"
                       : type.has_map_type()           ? "a map"
                       : type.has_optional_type()      ? "an optional"
                       : type.has_sparse_tensor_type() ? "a sparse tensor"
                                                       : "an unknown";
    throw ModelError(role + " '" + proto.name() + "' has " + kind +
                     " type; onda supports only dense tensors");
  }
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  if (tensor.elem_type() != 0) {
    info.dtype = dtype_from_onnx(tensor.elem_type());
    if (!info.dtype)
      throw ModelError(
          role + " '" + proto.name() + "' has data type " + onnx_data_type_name(tensor.elem_type()) +
          ", which onda does not support (supported: FLOAT, FLOAT16, INT32, INT64, UINT8, BOOL, and carried "
          "in them DOUBLE, INT8, INT16, UINT16, UINT32, UINT64)");
  }
  if (tensor.has_shape()) {
    Shape shape;
    for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
      if (dim.has_dim_value() && dim.dim_value() < 0)
        throw ModelError(role + " '" + proto.name() + "' has a negative dimension");
      shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      info.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
    }
    // The known dimensions must have a representable product, so later shape arithmetic on them
    // cannot overflow.
    Shape known;
    for (int64_t dim : shape)
      if (dim >= 0) known.push_back(dim);
    try {
      shape_numel(known);
    } catch (const ModelError& error) {
      throw ModelError(role + " '" + proto.name() + "': " + error.what());
    }
    info.shape = std::move(shape);
  }
  return info;
}

// Merges declared type information into what the graph knows (an initializer's own dtype/shape wins).
void record_value_info(Graph& graph, ValueInfo info) {
  ValueInfo& known = graph.value(info.name);
  if (graph.is_initializer(info.name)) return;
  if (info.dtype) known.dtype = info.dtype;
  if (info.shape) {
    known.shape = std::move(info.shape);
    known.dim_params = std::move(info.dim_params);
  }
}

Graph graph_from_proto(onnx::GraphProto& proto, LoadContext& context,
                       const std::set<std::string>& outer_scope);

// Old files (before IR 4 or so) leave AttributeProto.type unset; infer it from the field present.
onnx::AttributeProto::AttributeType attribute_type_of(const onnx::AttributeProto& proto) {
  if (proto.type() != onnx::AttributeProto::UNDEFINED) return proto.type();
  if (proto.has_f()) return onnx::AttributeProto::FLOAT;
  if (proto.has_i()) return onnx::AttributeProto::INT;
  if (proto.has_s()) return onnx::AttributeProto::STRING;
  if (proto.has_t()) return onnx::AttributeProto::TENSOR;
  if (proto.has_g()) return onnx::AttributeProto::GRAPH;
  if (proto.floats_size()) return onnx::AttributeProto::FLOATS;
  if (proto.ints_size()) return onnx::AttributeProto::INTS;
  if (proto.strings_size()) return onnx::AttributeProto::STRINGS;
  if (proto.tensors_size()) return onnx::AttributeProto::TENSORS;
  if (proto.graphs_size()) return onnx::AttributeProto::GRAPHS;
  return onnx::AttributeProto::UNDEFINED;
}

Attribute attribute_from_proto(onnx::AttributeProto& proto, const std::string& node_text,
                               LoadContext& context, const std::set<std::string>& scope) {
  const std::string what = "attribute '" + proto.name() + "' of node " + node_text;
  if (!proto.ref_attr_name().empty())
    throw ModelError(what + " refers to a function attribute ('" + proto.ref_attr_name() +
                     "'), which only functions may do");
  Attribute attribute;
  attribute.name = proto.name();
  switch (attribute_type_of(proto)) {
    case onnx::AttributeProto::INT:
      attribute.value = proto.i();
      break;
    case onnx::AttributeProto::FLOAT:
      attribute.value = proto.f();
      break;
    case onnx::AttributeProto::STRING:
      attribute.value = proto.s();
      break;
    case onnx::AttributeProto::INTS:
      attribute.value = std::vector<int64_t>(proto.ints().begin(), proto.ints().end());
      break;
    case onnx::AttributeProto::FLOATS:
      attribute.value = std::vector<float>(proto.floats().begin(), proto.floats().end());
      break;
    case onnx::AttributeProto::STRINGS:
      attribute.value = std::vector<std::string>(proto.strings().begin(), proto.strings().end());
      break;
    case onnx::AttributeProto::TENSOR:
      attribute.value = tensor_from_proto(*proto.mutable_t(), context.external, what);
      break;
    case onnx::AttributeProto::GRAPH:
      ++context.subgraph_depth;
      attribute.value = std::make_shared<const Graph>(graph_from_proto(*proto.mutable_g(), context, scope));
      --context.subgraph_depth;
      break;
    default:
      throw ModelError(what + " has type " +
                       onnx::AttributeProto::AttributeType_Name(attribute_type_of(proto)) +
                       ", which onda does not support");
  }
  return attribute;
}

// A Constant node's value as a tensor (opset 1..21 forms).
HostTensor constant_value(onnx::NodeProto& node, LoadContext& context, const std::string& node_text) {
  if (node.attribute_size() != 1)
    throw ModelError("Constant node " + node_text + " must have exactly one value attribute, it has " +
                     std::to_string(node.attribute_size()));
  onnx::AttributeProto& attribute = *node.mutable_attribute(0);
  const std::string& name = attribute.name();
  const std::map<std::string, onnx::AttributeProto::AttributeType> expected_types = {
      {"value", onnx::AttributeProto::TENSOR},
      {"value_float", onnx::AttributeProto::FLOAT},
      {"value_floats", onnx::AttributeProto::FLOATS},
      {"value_int", onnx::AttributeProto::INT},
      {"value_ints", onnx::AttributeProto::INTS}};
  auto expected = expected_types.find(name);
  if (expected != expected_types.end() && attribute_type_of(attribute) != expected->second)
    throw ModelError("Constant node " + node_text + ": attribute '" + name + "' has type " +
                     onnx::AttributeProto::AttributeType_Name(attribute_type_of(attribute)));
  if (name == "value")
    return tensor_from_proto(*attribute.mutable_t(), context.external, "Constant " + node_text);
  if (name == "value_float") return HostTensor::from_values<float>({}, {attribute.f()});
  if (name == "value_floats")
    return HostTensor::from_values<float>({attribute.floats_size()},
                                          {attribute.floats().begin(), attribute.floats().end()});
  if (name == "value_int") return HostTensor::from_values<int64_t>({}, {attribute.i()});
  if (name == "value_ints")
    return HostTensor::from_values<int64_t>({attribute.ints_size()},
                                            {attribute.ints().begin(), attribute.ints().end()});
  throw ModelError("Constant node " + node_text + ": attribute '" + name +
                   "' is not supported (strings and sparse "
                   "tensors are not)");
}

Graph graph_from_proto(onnx::GraphProto& proto, LoadContext& context,
                       const std::set<std::string>& outer_scope) {
  Graph graph;
  graph.name = proto.name();
  graph.ir_version = context.ir_version;
  graph.opset_imports = context.opset_imports;
  if (proto.sparse_initializer_size() > 0)
    throw ModelError("graph '" + proto.name() + "' has sparse initializers, which onda does not support");

  for (onnx::TensorProto& tensor : *proto.mutable_initializer()) {
    const std::string name = tensor.name();
    if (name.empty()) throw ModelError("graph '" + proto.name() + "' has an initializer without a name");
    if (graph.is_initializer(name)) throw ModelError("initializer '" + name + "' is defined twice");
    graph.set_initializer(name, tensor_from_proto(tensor, context.external, "initializer '" + name + "'"));
  }
  for (const onnx::ValueInfoProto& input : proto.input()) {
    ValueInfo info = value_info_from_proto(input, "graph input", context.subgraph_depth > 0);
    // Before IR 4 every initializer was also listed as an input; such inputs are constants here.
    if (!graph.is_initializer(info.name)) graph.inputs.push_back(info.name);
    record_value_info(graph, std::move(info));
  }
  for (const onnx::ValueInfoProto& output : proto.output()) {
    graph.outputs.push_back(output.name());
    record_value_info(graph, value_info_from_proto(output, "graph output", context.subgraph_depth > 0));
  }
  for (const onnx::ValueInfoProto& value : proto.value_info())
    record_value_info(graph, value_info_from_proto(value, "value", true));

  // Every name a subgraph of this graph may read: the enclosing scopes plus all of this graph's.
  std::set<std::string> scope = outer_scope;
  scope.insert(graph.inputs.begin(), graph.inputs.end());
  for (const auto& [name, tensor] : graph.initializers) scope.insert(name);
  for (const onnx::NodeProto& node : proto.node()) scope.insert(node.output().begin(), node.output().end());

  for (onnx::NodeProto& node_proto : *proto.mutable_node()) {
    const std::string node_text = node_proto.op_type() + " '" + node_proto.name() + "'";
    bool domain_imported = false;
    for (const OpsetImport& opset : context.opset_imports)
      domain_imported |= canonical_domain(opset.domain) == canonical_domain(node_proto.domain());
    if (!domain_imported)
      throw ModelError("node " + node_text + " uses domain '" + node_proto.domain() +
                       "', for which the model imports no opset");
    const bool is_constant =
        node_proto.op_type() == "Constant" && canonical_domain(node_proto.domain()).empty();
    if (is_constant && context.options.constants_to_initializers) {
      if (node_proto.output_size() != 1 || node_proto.output(0).empty())
        throw ModelError("Constant node " + node_text + " must have one output");
      const std::string& output = node_proto.output(0);
      if (graph.is_initializer(output)) throw ModelError("value '" + output + "' is assigned twice");
      graph.set_initializer(output, constant_value(node_proto, context, node_text));
      continue;
    }
    Node node;
    node.op_type = node_proto.op_type();
    node.domain = node_proto.domain();
    node.name = node_proto.name();
    node.inputs.assign(node_proto.input().begin(), node_proto.input().end());
    node.outputs.assign(node_proto.output().begin(), node_proto.output().end());
    if (node.op_type.empty()) throw ModelError("a node without an op type (" + node_text + ")");
    // Every ONNX operator has at least one output (optional ones are given as empty names).
    if (node.outputs.empty() && canonical_domain(node.domain).empty())
      throw ModelError("node " + node_text + " has no outputs");
    for (onnx::AttributeProto& attribute : *node_proto.mutable_attribute())
      node.attributes.push_back(attribute_from_proto(attribute, node_text, context, scope));
    for (const std::string& output : node.outputs)
      if (!output.empty()) graph.value(output);
    graph.nodes.push_back(std::move(node));
  }
  graph.sort_topologically(outer_scope);
  return graph;
}

Graph model_from_proto(onnx::ModelProto& model, const std::filesystem::path& model_dir,
                       const std::string& what, const OnnxLoadOptions& options) {
  if (!model.has_ir_version() || model.ir_version() < options.minimum_ir_version)
    throw ModelError(what + ": ONNX IR version " + std::to_string(model.ir_version()) + " is older than " +
                     std::to_string(options.minimum_ir_version) +
                     " (re-export with a newer exporter or run "
                     "onnx.version_converter)");
  if (!model.has_graph())
    throw ModelError(what + ": the file has no graph (truncated or not an ONNX model?)");
  LoadContext context{nullptr, options, {}, model.ir_version()};
  for (const onnx::OperatorSetIdProto& opset : model.opset_import())
    context.opset_imports.push_back({opset.domain(), opset.version()});
  // Opset imports follow the graph in the file, so a file cut after its graph has none.
  if (context.opset_imports.empty())
    throw ModelError(what + ": the model imports no opset (truncated file?)");
  ExternalDataFiles external(options.external_data_dir.value_or(model_dir), options.external_data_resolver);
  context.external = &external;
  try {
    onnx_format::inline_model_functions(model);
    Graph graph = graph_from_proto(*model.mutable_graph(), context, {});
    graph.validate();
    return graph;
  } catch (const ModelError& error) {
    throw ModelError(what + ": " + error.what());
  }
}

}  // namespace

Graph parse_onnx_model(std::string_view bytes, const std::filesystem::path& model_dir,
                       const std::string& what, const OnnxLoadOptions& options) {
  onnx::ModelProto model;
  if (bytes.size() > INT32_MAX)
    throw ModelError(what + ": a model file over 2 GB must keep its weights as external data");
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw ModelError(what +
                     ": not a valid ONNX model (the protobuf does not parse: truncated or corrupt file)");
  return model_from_proto(model, model_dir, what, options);
}

Graph load_onnx_model(const std::filesystem::path& path, const OnnxLoadOptions& options) {
  const std::string bytes = read_file(path, "model");
  return parse_onnx_model(bytes, path.parent_path().empty() ? "." : path.parent_path(), path.string(),
                          options);
}

HostTensor read_tensor_proto_file(const std::filesystem::path& path, std::string* name) {
  const std::string bytes = read_file(path, "tensor file");
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw ModelError(path.string() + ": not a valid TensorProto (truncated or corrupt file)");
  ExternalDataFiles external(path.parent_path().empty() ? "." : path.parent_path());
  if (name) *name = proto.name();
  try {
    return tensor_from_proto(proto, &external, "tensor '" + proto.name() + "'");
  } catch (const ModelError& error) {
    throw ModelError(path.string() + ": " + error.what());
  }
}

}  // namespace onda
