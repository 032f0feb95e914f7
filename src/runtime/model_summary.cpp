// summarize_model: the ModelProto read directly (no graph IR, no weights, no GPU), so `onda
// inspect` works on weight-stripped files and on models onda cannot run.
#include "onda/model_summary.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "ops/op_registry.h"

namespace onda {
namespace {

namespace fs = std::filesystem;

std::string canonical_domain(const std::string& domain) {
  return domain == "ai.onnx" ? "" : domain;
}

ValueSummary value_summary(const onnx::ValueInfoProto& value) {
  ValueSummary v;
  v.name = value.name();
  if (!value.type().has_tensor_type()) return v;
  const auto& tensor = value.type().tensor_type();
  if (tensor.elem_type() != 0) v.dtype = onnx_data_type_name(tensor.elem_type());
  if (is_carried_onnx_type(tensor.elem_type()))
    v.carried_as = std::string(dtype_name(*dtype_from_onnx(tensor.elem_type())));
  if (!tensor.has_shape()) return v;
  v.has_shape = true;
  for (const auto& dim : tensor.shape().dim()) {
    if (dim.has_dim_value()) {
      v.shape.push_back(std::to_string(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      v.shape.push_back(dim.dim_param());
    } else {
      v.shape.push_back("?");
    }
  }
  return v;
}

struct Counter {
  const std::map<std::string, int64_t>& opsets;
  std::set<std::pair<std::string, std::string>> local_functions;
  std::map<std::pair<std::string, std::string>, int64_t> counts;
  int64_t nodes = 0;

  void count(const onnx::GraphProto& graph) {
    for (const auto& node : graph.node()) {
      ++nodes;
      ++counts[{canonical_domain(node.domain()), node.op_type()}];
      for (const auto& attribute : node.attribute()) {
        if (attribute.has_g()) count(attribute.g());
        for (const auto& g : attribute.graphs()) count(g);
      }
    }
  }

  bool supported(const std::string& domain, const std::string& op_type) const {
    if (local_functions.count({domain, op_type})) return true;  // inlined; its body is counted too
    if (domain.empty() && op_type == "Constant") return true;   // the loader makes them initializers
    const auto opset = opsets.find(domain);
    return ops::find_op(domain, op_type, opset == opsets.end() ? 0 : opset->second) != nullptr;
  }
};

void add_external(std::map<std::string, ExternalDataFile>& files, const onnx::TensorProto& tensor) {
  if (tensor.data_location() != onnx::TensorProto::EXTERNAL) return;
  std::string location;
  uint64_t length = 0;
  for (const auto& entry : tensor.external_data()) {
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "length") length = std::strtoull(entry.value().c_str(), nullptr, 10);
  }
  ExternalDataFile& file = files[location];
  file.location = location;
  file.bytes += length;
  ++file.tensors;
}

}  // namespace

ModelSummary summarize_model(const fs::path& model) {
  std::error_code ec;
  if (!fs::is_regular_file(model, ec))
    throw ModelError(fmt::format("cannot read model '{}': {}", model.string(),
                                 fs::exists(model, ec) ? "not a file" : "no such file"));
  // One copy of the bytes (a model with its weights inline can be hundreds of MB).
  std::string bytes(static_cast<size_t>(fs::file_size(model, ec)), '\0');
  std::ifstream file(model, std::ios::binary);
  if (ec || !file.read(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw ModelError(fmt::format("cannot read model '{}'", model.string()));
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || !proto.has_graph())
    throw ModelError(fmt::format("'{}' is not an ONNX model (no ModelProto with a graph)", model.string()));

  ModelSummary s;
  s.ir_version = proto.ir_version();
  s.producer_name = proto.producer_name();
  s.producer_version = proto.producer_version();
  s.domain = proto.domain();
  s.model_version = proto.model_version();
  s.doc_string = proto.doc_string();
  for (const auto& opset : proto.opset_import()) s.opsets[canonical_domain(opset.domain())] = opset.version();
  for (const auto& entry : proto.metadata_props()) s.metadata[entry.key()] = entry.value();

  const onnx::GraphProto& graph = proto.graph();
  std::set<std::string> initializer_names;
  std::map<std::string, ExternalDataFile> external;
  for (const auto& tensor : graph.initializer()) {
    initializer_names.insert(tensor.name());
    ++s.initializers;
    if (tensor.data_location() != onnx::TensorProto::EXTERNAL)  // raw bytes, else the typed fields' encoding
      s.initializer_bytes += tensor.has_raw_data() ? tensor.raw_data().size() : tensor.ByteSizeLong();
    add_external(external, tensor);
  }
  for (const auto& input : graph.input())
    if (!initializer_names.count(input.name())) s.inputs.push_back(value_summary(input));
  for (const auto& output : graph.output()) s.outputs.push_back(value_summary(output));
  // Constant nodes may carry external tensors too.
  for (const auto& node : graph.node())
    for (const auto& attribute : node.attribute())
      if (attribute.has_t()) add_external(external, attribute.t());
  for (auto& [location, entry] : external) {
    entry.present = !location.empty() && fs::is_regular_file(model.parent_path() / location, ec);
    s.external_data.push_back(entry);
  }

  Counter counter{s.opsets, {}, {}, 0};
  for (const auto& function : proto.functions())
    counter.local_functions.insert({canonical_domain(function.domain()), function.name()});
  counter.count(graph);
  for (const auto& function : proto.functions()) {
    onnx::GraphProto body;
    *body.mutable_node() = function.node();
    counter.count(body);
  }
  s.nodes = counter.nodes;
  for (const auto& [key, count] : counter.counts)
    s.ops.push_back({key.first, key.second, count, counter.supported(key.first, key.second)});
  std::stable_sort(s.ops.begin(), s.ops.end(),
                   [](const OpCount& a, const OpCount& b) { return a.count > b.count; });
  return s;
}

}  // namespace onda
