// ONNX's own node conformance models (Debian's libonnx-testdata), loading side: every model.onnx loads, or is
// rejected with a ModelError for a reason the engine documents (a dtype or a type it does not hold);
// the loaded graph has the node, initializer and input counts of the file. And the TensorProto
// .pb test data decodes to the values the ops define.
#include <cmath>
#include <map>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "harness.h"
#include "onnx/onnx_loader.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

namespace fs = std::filesystem;

// Whether every declared type in the file is a dense tensor of a supported dtype (computed here from
// the protobuf, independently of the loader), i.e. whether the loader must accept it.
bool declares_only_supported_types(const onnx::GraphProto& graph) {
  auto tensor_ok = [](const onnx::ValueInfoProto& value) {
    if (!value.has_type()) return true;
    if (!value.type().has_tensor_type()) return false;
    const int elem = value.type().tensor_type().elem_type();
    return elem == 0 || dtype_from_onnx(elem).has_value();
  };
  for (const auto& list : {graph.input(), graph.output(), graph.value_info()})
    for (const onnx::ValueInfoProto& value : list)
      if (!tensor_ok(value)) return false;
  for (const onnx::TensorProto& tensor : graph.initializer())
    if (!dtype_from_onnx(tensor.data_type())) return false;
  if (graph.sparse_initializer_size()) return false;
  for (const onnx::NodeProto& node : graph.node())
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_t() && !dtype_from_onnx(attribute.t().data_type())) return false;
      if (attribute.has_sparse_tensor() || attribute.graphs_size() || attribute.tensors_size() ||
          attribute.type_protos_size() || attribute.has_tp())
        return false;
      if (node.op_type() == "Constant" &&
          (attribute.name() == "value_string" || attribute.name() == "value_strings"))
        return false;
      if (attribute.has_g() && !declares_only_supported_types(attribute.g())) return false;
    }
  return true;
}

TEST(OnnxConformanceLoading, LoadsEveryNodeTestModel) {
  const std::optional<fs::path> root = test::onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "no ONNX node tests (apt-get install libonnx-testdata)";
  // The default options: every IR from 3 (ONNX's older test files included); IR 2 and older are refused.
  OnnxLoadOptions newer_only;
  newer_only.minimum_ir_version = 7;
  int loaded = 0, rejected = 0, older_ir = 0;
  std::map<std::string, int> reasons;
  for (const fs::directory_entry& entry : fs::directory_iterator(*root)) {
    const fs::path model_path = entry.path() / "model.onnx";
    if (!fs::exists(model_path)) continue;
    const std::string case_name = entry.path().filename().string();
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(test::read_file_bytes(model_path))) << case_name;
    const bool must_load = declares_only_supported_types(proto.graph());

    if (proto.ir_version() < 7) {  // a minimum of 7 rejects these, naming the version
      ++older_ir;
      try {
        load_onnx_model(model_path, newer_only);
        ADD_FAILURE() << case_name << ": IR " << proto.ir_version() << " accepted with a minimum of 7";
      } catch (const ModelError& error) {
        EXPECT_NE(std::string(error.what()).find("IR version"), std::string::npos) << error.what();
      }
    }
    try {
      const Graph graph = load_onnx_model(model_path);
      ++loaded;
      size_t constants = 0;
      for (const onnx::NodeProto& node : proto.graph().node()) constants += node.op_type() == "Constant";
      std::set<std::string> initializer_names;
      for (const onnx::TensorProto& tensor : proto.graph().initializer())
        initializer_names.insert(tensor.name());
      size_t runtime_inputs = 0;
      for (const onnx::ValueInfoProto& input : proto.graph().input())
        runtime_inputs += initializer_names.count(input.name()) == 0;
      EXPECT_EQ(graph.nodes.size(), proto.graph().node_size() - constants) << case_name;
      EXPECT_EQ(graph.initializers.size(), proto.graph().initializer_size() + constants) << case_name;
      EXPECT_EQ(graph.inputs.size(), runtime_inputs) << case_name;
      EXPECT_EQ(graph.outputs.size(), static_cast<size_t>(proto.graph().output_size())) << case_name;
      for (const onnx::NodeProto& node : proto.graph().node())
        if (node.op_type() != "Constant") {
          EXPECT_GT(graph.opset_version(node.domain()), 0) << case_name << ": domain " << node.domain();
          break;
        }
    } catch (const ModelError& error) {
      ++rejected;
      const std::string message = error.what();
      EXPECT_FALSE(must_load) << case_name << " declares only supported types but failed: " << message;
      const bool documented = message.find("does not support") != std::string::npos ||
                              message.find("only dense tensors") != std::string::npos ||
                              message.find("is not supported") != std::string::npos;
      EXPECT_TRUE(documented) << case_name << ": " << message;
      // Tally by the unsupported thing ("data type DOUBLE", "a sequence type", ...).
      for (const char* marker : {"data type ", "has a", "has an", "attribute '"}) {
        const size_t at = message.find(marker);
        if (at != std::string::npos) {
          reasons[message.substr(at, message.find_first_of(",;", at) - at).substr(0, 40)]++;
          break;
        }
      }
    }
  }
  std::printf("node test models: %d loaded, %d rejected (unsupported types), %d of them IR 3-6\n", loaded,
              rejected, older_ir);
  for (const auto& [reason, count] : reasons) std::printf("  rejected %3d x: %s\n", count, reason.c_str());
  EXPECT_GT(loaded, 500);
}

const HostTensor read_case_tensor(const fs::path& case_dir, const std::string& file) {
  return read_tensor_proto_file(case_dir / "test_data_set_0" / file);
}

// The data of a binary elementwise case decodes to values for which output = op(inputs) exactly
// (float32 arithmetic is correctly rounded, so numpy's float32 results are reproduced bit for bit).
TEST(OnnxConformanceLoading, TensorProtoDataOfElementwiseCases) {
  const std::optional<fs::path> root = test::onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "no ONNX node tests (apt-get install libonnx-testdata)";
  struct Case {
    const char* name;
    float (*op)(float, float);
  };
  const Case cases[] = {{"test_add", [](float a, float b) { return a + b; }},
                        {"test_sub", [](float a, float b) { return a - b; }},
                        {"test_mul", [](float a, float b) { return a * b; }}};
  for (const Case& c : cases) {
    const fs::path dir = *root / c.name;
    const Graph graph = load_onnx_model(dir / "model.onnx");
    const HostTensor a = read_case_tensor(dir, "input_0.pb");
    const HostTensor b = read_case_tensor(dir, "input_1.pb");
    const HostTensor out = read_case_tensor(dir, "output_0.pb");
    ASSERT_EQ(a.shape(), *graph.find_value(graph.inputs[0])->shape) << c.name;
    ASSERT_EQ(out.shape(), a.shape()) << c.name;
    const std::span<const float> av = a.values<float>(), bv = b.values<float>(), ov = out.values<float>();
    int mismatches = 0;
    for (size_t i = 0; i < ov.size(); ++i) mismatches += c.op(av[i], bv[i]) != ov[i];
    EXPECT_EQ(mismatches, 0) << c.name;
  }
}

// Shape's int64 output equals the dims of its float input; MatMul's output matches a float64
// product (rel L2 printed).
TEST(OnnxConformanceLoading, TensorProtoDataOfShapeAndMatMul) {
  const std::optional<fs::path> root = test::onnx_node_tests_dir();
  if (!root) GTEST_SKIP() << "no ONNX node tests (apt-get install libonnx-testdata)";
  const HostTensor shape_input = read_case_tensor(*root / "test_shape", "input_0.pb");
  const HostTensor shape_output = read_case_tensor(*root / "test_shape", "output_0.pb");
  EXPECT_EQ(shape_output.dtype(), DType::i64);
  EXPECT_EQ(shape_output.to_int64(), shape_input.shape());

  const fs::path dir = *root / "test_matmul_2d";
  const HostTensor a = read_case_tensor(dir, "input_0.pb"), b = read_case_tensor(dir, "input_1.pb");
  const HostTensor out = read_case_tensor(dir, "output_0.pb");
  ASSERT_EQ(a.rank(), 2);
  const int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  ASSERT_EQ(b.shape()[0], k);
  ASSERT_EQ(out.shape(), (Shape{m, n}));
  const std::vector<double> av = a.to_double(), bv = b.to_double();
  std::vector<double> reference(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) reference[i * n + j] += av[i * k + p] * bv[p * n + j];
  const std::span<const float> ov = out.values<float>();
  const double error = test::rel_l2(std::vector<float>(ov.begin(), ov.end()), reference);
  std::printf("test_matmul_2d output vs float64 product: rel L2 %.3g\n", error);
  EXPECT_LT(error, 1e-6);
}

}  // namespace
}  // namespace onda
