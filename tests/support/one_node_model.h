// A model of one node over typed inputs and outputs, built in memory for op tests that run through
// the public Session.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <utility>
#include <vector>

#include "graph/host_tensor.h"
#include "test_onnx_support.h"

namespace onda::test {

// Inputs and outputs with their ONNX element types (onnx::TensorProto::FLOAT, INT64, ...); the node
// is named "node_under_test".
struct OneNode {
  onnx::ModelProto model = empty_model();
  onnx::NodeProto* node = nullptr;
  OneNode(const std::string& op, const std::vector<std::pair<std::string, Shape>>& inputs,
          const std::vector<int>& types, const std::vector<std::pair<std::string, Shape>>& outputs,
          const std::vector<int>& output_types) {
    auto* graph = model.mutable_graph();
    std::vector<std::string> in_names, out_names;
    for (size_t i = 0; i < inputs.size(); ++i) {
      in_names.push_back(inputs[i].first);
      add_tensor_value(graph->mutable_input(), inputs[i].first, types[i], inputs[i].second);
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      out_names.push_back(outputs[i].first);
      add_tensor_value(graph->mutable_output(), outputs[i].first, output_types[i], outputs[i].second);
    }
    node = add_node(graph, op, in_names, out_names, "node_under_test");
  }
};

inline void set_string(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

inline HostTensor floats(const Shape& shape, const std::vector<float>& v) {
  return HostTensor::copy_of(DType::f32, shape, v.data(), v.size() * 4);
}

}  // namespace onda::test
