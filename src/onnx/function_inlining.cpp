#include "onnx/function_inlining.h"

#include <map>
#include <set>
#include <string>

#include "graph/graph.h"
#include "graph/model_error.h"

namespace onda::onnx_format {

namespace {

using FunctionKey = std::pair<std::string, std::string>;  // (canonical domain, name)

class Inliner {
 public:
  explicit Inliner(onnx::ModelProto& model) {
    for (const onnx::FunctionProto& function : model.functions())
      functions_[{std::string(canonical_domain(function.domain())), function.name()}] = &function;
  }

  void inline_graph(onnx::GraphProto& graph, int depth) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> expanded;
    for (onnx::NodeProto& node : *graph.mutable_node()) {
      for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
        if (attribute.has_g()) inline_graph(*attribute.mutable_g(), depth);
        for (onnx::GraphProto& subgraph : *attribute.mutable_graphs()) inline_graph(subgraph, depth);
      }
      auto found = functions_.find({std::string(canonical_domain(node.domain())), node.op_type()});
      if (found == functions_.end()) {
        *expanded.Add() = std::move(node);
        continue;
      }
      for (onnx::NodeProto& body_node : expand_call(node, *found->second, depth))
        *expanded.Add() = std::move(body_node);
    }
    *graph.mutable_node() = std::move(expanded);
  }

 private:
  std::vector<onnx::NodeProto> expand_call(const onnx::NodeProto& call, const onnx::FunctionProto& function,
                                           int depth) {
    const std::string call_text = call.op_type() + " '" + call.name() + "'";
    if (depth > 32)
      throw ModelError("function calls nested deeper than 32 at " + call_text + " (recursion?)");
    if (call.input_size() > function.input_size() || call.output_size() > function.output_size())
      throw ModelError("node " + call_text + " passes more inputs or outputs than function '" +
                       function.name() + "' declares");
    const std::string prefix =
        (call.name().empty() ? function.name() : call.name()) + "/" + std::to_string(call_counter_++) + "/";
    std::map<std::string, std::string> renamed;
    for (int i = 0; i < function.input_size(); ++i)
      renamed[function.input(i)] = i < call.input_size() ? call.input(i) : "";
    for (int i = 0; i < function.output_size(); ++i)
      renamed[function.output(i)] =
          i < call.output_size() && !call.output(i).empty() ? call.output(i) : prefix + function.output(i);
    auto rename = [&](const std::string& name) {
      if (name.empty()) return name;
      auto found = renamed.find(name);
      return found != renamed.end() ? found->second : prefix + name;
    };
    // ONNX 1.12's proto (Debian's libonnx) has no FunctionProto.attribute_proto (IR 9 defaults):
    // a reference the caller does not set is dropped, so the op's own default applies.
    std::map<std::string, const onnx::AttributeProto*> caller_attributes;
    for (const onnx::AttributeProto& attribute : call.attribute())
      caller_attributes[attribute.name()] = &attribute;

    inlined_nodes_ += static_cast<size_t>(function.node_size());
    if (inlined_nodes_ > kMaxInlinedNodes)
      throw ModelError("inlining functions would create more than " + std::to_string(kMaxInlinedNodes) +
                       " nodes (at " + call_text + ")");
    onnx::GraphProto body;  // the body as a graph, so nested calls inline by the same path
    for (const onnx::NodeProto& source : function.node()) {
      onnx::NodeProto node = source;
      node.set_name(prefix + source.name());
      for (std::string& input : *node.mutable_input()) input = rename(input);
      for (std::string& output : *node.mutable_output()) output = rename(output);
      google::protobuf::RepeatedPtrField<onnx::AttributeProto> attributes;
      for (const onnx::AttributeProto& attribute : source.attribute()) {
        if (attribute.has_g() || attribute.graphs_size())
          throw ModelError("function '" + function.name() + "' holds a subgraph, which onda cannot inline");
        if (attribute.ref_attr_name().empty()) {
          *attributes.Add() = attribute;
          continue;
        }
        auto given = caller_attributes.find(attribute.ref_attr_name());
        if (given == caller_attributes.end()) continue;  // not set by the caller: the op's default
        onnx::AttributeProto* resolved = attributes.Add();
        *resolved = *given->second;
        resolved->set_name(attribute.name());
      }
      *node.mutable_attribute() = std::move(attributes);
      *body.add_node() = std::move(node);
    }
    inline_graph(body, depth + 1);
    return {std::make_move_iterator(body.mutable_node()->begin()),
            std::make_move_iterator(body.mutable_node()->end())};
  }

  // Calls that fan out (F calls G twice, G calls H twice, ...) grow exponentially: cap the total.
  static constexpr size_t kMaxInlinedNodes = 1'000'000;

  std::map<FunctionKey, const onnx::FunctionProto*> functions_;
  size_t call_counter_ = 0;
  size_t inlined_nodes_ = 0;
};

}  // namespace

void inline_model_functions(onnx::ModelProto& model) {
  if (model.functions_size() == 0) return;
  Inliner(model).inline_graph(*model.mutable_graph(), 0);
  model.clear_functions();
}

}  // namespace onda::onnx_format
