// Helpers for the graph / ONNX loader tests: where the test data lives, temporary folders, and
// small ONNX models built in memory with protobuf (so each loader rule is tested on a file made for it).
#pragma once
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "test_paths.h"

namespace onda::test {

namespace fs = std::filesystem;

// ONNX's node conformance tests (Debian's libonnx-testdata); ONDA_ONNX_TESTDATA overrides.
inline std::optional<fs::path> onnx_node_tests_dir() {
  if (const char* env = std::getenv("ONDA_ONNX_TESTDATA")) return fs::path(env);
  const fs::path debian = "/usr/share/libonnx-testdata/data/node";
  if (fs::is_directory(debian)) return debian;
  return std::nullopt;
}

// The four weight-stripped reference models (shared/models); ONDA_MODELS_DIR overrides.
inline std::optional<fs::path> reference_models_dir() {
  if (const char* env = std::getenv("ONDA_MODELS_DIR")) return fs::path(env);
  for (const fs::path& candidate :
       {checkout_dir() / "shared/models", checkout_dir() / "../shared/models",
        fs::path("/work/shared/models")})
    if (fs::exists(candidate / "mpsenet.onnx")) return candidate;
  return std::nullopt;
}

// A fresh folder under the system temp dir, removed with its contents at scope exit.
class TemporaryFolder {
 public:
  TemporaryFolder() {
    std::random_device device;
    path_ =
        fs::temp_directory_path() / ("onda_onnx_test_" + std::to_string(device()) + std::to_string(device()));
    fs::create_directories(path_);
  }
  ~TemporaryFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(file.good()) << "cannot write " << path;
}

inline std::string read_file_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// A model with IR 8, opset 17 and an empty graph named "g", to which a test adds what it checks.
inline onnx::ModelProto empty_model() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  model.mutable_graph()->set_name("g");
  return model;
}

inline onnx::ValueInfoProto* add_tensor_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                                              const std::string& name, int elem_type,
                                              std::vector<int64_t> dims) {
  onnx::ValueInfoProto* value = list->Add();
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (int64_t dim : dims) shape->add_dim()->set_dim_value(dim);
  return value;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* graph, const std::string& op_type,
                                 std::vector<std::string> inputs, std::vector<std::string> outputs,
                                 const std::string& name = "") {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op_type);
  node->set_name(name);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

}  // namespace onda::test

namespace onda::test {

// A Python 3 interpreter that can import numpy (for materialize.py and .npy interop), if any.
inline std::optional<std::string> python_with_numpy() {
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string command = std::string(candidate) + " -c 'import numpy' >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return std::string(candidate);
  }
  return std::nullopt;
}

}  // namespace onda::test
