// Helpers for runtime tests that build a small ONNX model in memory, open it as a Session and run it.
#pragma once
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "onda/session.h"
#include "test_onnx_support.h"

namespace onda::test {

// Writes `model` into `folder` and opens it (each Session owns its own GPU context).
inline std::unique_ptr<Session> open_session(const onnx::ModelProto& model, const TemporaryFolder& folder,
                                             const std::string& file_name = "model.onnx") {
  const auto path = folder.path() / file_name;
  write_file(path, model.SerializeAsString());
  return Session::open(path);
}

inline void add_float_initializer(onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->add_dims(dim);
  tensor->set_raw_data(values.data(), values.size() * sizeof(float));
}

inline void add_int64_initializer(onnx::GraphProto* graph, const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& values) {
  onnx::TensorProto* tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::INT64);
  for (int64_t dim : dims) tensor->add_dims(dim);
  for (int64_t value : values) tensor->add_int64_data(value);
}

inline onnx::AttributeProto* add_int_attribute(onnx::NodeProto* node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
  return attribute;
}

inline onnx::AttributeProto* add_float_attribute(onnx::NodeProto* node, const std::string& name, float value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(value);
  return attribute;
}

inline onnx::AttributeProto* add_ints_attribute(onnx::NodeProto* node, const std::string& name,
                                                const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t value : values) attribute->add_ints(value);
  return attribute;
}

// A float32 output's values, copied out of the HostTensor.
inline std::vector<float> values_of(const HostTensor& t) {
  const auto v = t.values<float>();
  return {v.begin(), v.end()};
}

// A float output whose shape is left to inference.
inline void add_float_output(onnx::GraphProto* graph, const std::string& name) {
  onnx::ValueInfoProto* value = graph->add_output();
  value->set_name(name);
  value->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// A serialized model as the bytes Session::open_bytes takes.
inline std::vector<std::byte> as_bytes(const std::string& s) {
  std::vector<std::byte> bytes(s.size());
  std::memcpy(bytes.data(), s.data(), s.size());
  return bytes;
}

// Whether two host tensors hold the same bytes (a replayed or planned run against the first one).
inline bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.byte_size() == b.byte_size() && std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

}  // namespace onda::test
