// Models as exporters write them: the same small network (Split, a centring ReduceMean, a layer
// norm, Clip with an omitted min) saved at opsets 15 to 18, where signatures change (ReduceMean's
// axes attribute becomes an input at 18; LayerNormalization exists from 17, before which exporters
// decompose it), with a dynamic batch dimension bound from the input, optional inputs and outputs
// given as empty names, tensor names with ':' and '/', and outputs named by numbers. Every variant
// must load, run on the GPU and agree with a float64 reference (and so with each other).
#include <gtest/gtest.h>

#include <cmath>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr int64_t kSplitFeatures = 6;  // split into 2 + 4
constexpr float kClipMax = 1.5f;
constexpr float kEpsilon = 1e-5f;

// ReduceMean over the last axis, keepdims: axes as an attribute before opset 18, an input from 18.
void add_reduce_mean(onnx::GraphProto* graph, int64_t opset, const std::string& input, const std::string& output,
                     const std::string& name) {
  if (opset >= 18) {
    add_node(graph, "ReduceMean", {input, "last_axis"}, {output}, name);
  } else {
    add_ints_attribute(add_node(graph, "ReduceMean", {input}, {output}, name), "axes", {-1});
  }
}

onnx::ModelProto exported_at(int64_t opset, const std::vector<float>& scale) {
  onnx::ModelProto model = empty_model();
  model.mutable_opset_import(0)->set_version(opset);
  onnx::GraphProto* graph = model.mutable_graph();
  onnx::ValueInfoProto* input =
      add_tensor_value(graph->mutable_input(), "input:0", onnx::TensorProto::FLOAT, {1, kSplitFeatures});
  input->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  add_int64_initializer(graph, "encoder/split_sizes:0", {2}, {2, 4});
  add_int64_initializer(graph, "last_axis", {1}, {-1});
  add_float_initializer(graph, "encoder/norm/scale:0", {4}, scale);
  add_float_initializer(graph, "encoder/clip/max:0", {}, {kClipMax});
  add_float_initializer(graph, "epsilon", {}, {kEpsilon});

  // Split's sizes are an input from opset 13 (all variants here).
  add_int_attribute(add_node(graph, "Split", {"input:0", "encoder/split_sizes:0"}, {"encoder/a:0", "encoder/b:0"},
                             "encoder/Split"),
                    "axis", 1);
  add_reduce_mean(graph, opset, "encoder/a:0", "2", "encoder/ReduceMean");  // output "2"
  add_node(graph, "Sub", {"encoder/a:0", "2"}, {"encoder/centred:0"}, "encoder/Sub");
  if (opset >= 17) {
    onnx::NodeProto* norm = add_node(graph, "LayerNormalization", {"encoder/b:0", "encoder/norm/scale:0", ""},
                                     {"encoder/norm:0", "", ""}, "encoder/norm/LayerNormalization");
    add_int_attribute(norm, "axis", -1);
    onnx::AttributeProto* epsilon = norm->add_attribute();
    epsilon->set_name("epsilon");
    epsilon->set_type(onnx::AttributeProto::FLOAT);
    epsilon->set_f(kEpsilon);
  } else {  // the decomposition exporters write before LayerNormalization existed
    add_reduce_mean(graph, opset, "encoder/b:0", "encoder/norm/mean:0", "encoder/norm/ReduceMean");
    add_node(graph, "Sub", {"encoder/b:0", "encoder/norm/mean:0"}, {"encoder/norm/d:0"}, "encoder/norm/Sub");
    add_node(graph, "Mul", {"encoder/norm/d:0", "encoder/norm/d:0"}, {"encoder/norm/d2:0"}, "encoder/norm/Mul");
    add_reduce_mean(graph, opset, "encoder/norm/d2:0", "encoder/norm/var:0", "encoder/norm/ReduceMean_1");
    add_node(graph, "Add", {"encoder/norm/var:0", "epsilon"}, {"encoder/norm/var_eps:0"}, "encoder/norm/Add");
    add_node(graph, "Sqrt", {"encoder/norm/var_eps:0"}, {"encoder/norm/std:0"}, "encoder/norm/Sqrt");
    add_node(graph, "Div", {"encoder/norm/d:0", "encoder/norm/std:0"}, {"encoder/norm/n:0"}, "encoder/norm/Div");
    add_node(graph, "Mul", {"encoder/norm/n:0", "encoder/norm/scale:0"}, {"encoder/norm:0"}, "encoder/norm/Mul_1");
  }
  add_int_attribute(add_node(graph, "Concat", {"encoder/centred:0", "encoder/norm:0"}, {"encoder/joined:0"},
                             "encoder/Concat"),
                    "axis", 1);
  add_node(graph, "Clip", {"encoder/joined:0", "", "encoder/clip/max:0"}, {"1"}, "encoder/Clip");  // no min
  add_float_output(graph, "1");
  add_float_output(graph, "2");
  return model;
}

// Rows of [batch, 6]: output "1" and output "2" in float64.
void reference(const std::vector<float>& x, int64_t batch, const std::vector<float>& scale, std::vector<double>& one,
               std::vector<double>& two) {
  one.assign(batch * kSplitFeatures, 0);
  two.assign(batch, 0);
  for (int64_t r = 0; r < batch; ++r) {
    const float* row = &x[r * kSplitFeatures];
    const double mean_a = (double(row[0]) + row[1]) / 2;
    two[r] = mean_a;
    double mean_b = 0, var_b = 0;
    for (int i = 2; i < 6; ++i) mean_b += row[i] / 4.0;
    for (int i = 2; i < 6; ++i) var_b += (row[i] - mean_b) * (row[i] - mean_b) / 4.0;
    for (int i = 0; i < 2; ++i) one[r * kSplitFeatures + i] = row[i] - mean_a;
    for (int i = 2; i < 6; ++i) one[r * kSplitFeatures + i] = (row[i] - mean_b) / std::sqrt(var_b + kEpsilon) * scale[i - 2];
    for (int i = 0; i < 6; ++i) one[r * kSplitFeatures + i] = std::min<double>(one[r * kSplitFeatures + i], kClipMax);
  }
}

std::vector<float> floats_of(const HostTensor& tensor) {
  const auto values = tensor.values<float>();
  return {values.begin(), values.end()};
}

TEST(RuntimeExporterVariants, Opsets15To18DynamicBatchAndExporterNames) {
  Random random(test_seed());
  const std::vector<float> scale = random.uniform(4, 0.5, 2.0);
  for (int64_t opset : {15, 16, 17, 18}) {
    TemporaryFolder folder;
    auto session = open_session(exported_at(opset, scale), folder);
    ASSERT_EQ(session->inputs().size(), 1u);
    EXPECT_EQ(session->inputs()[0].name, "input:0");
    EXPECT_EQ(session->inputs()[0].shape, (std::vector<int64_t>{-1, kSplitFeatures}));  // batch bound per run
    for (int64_t batch : {3, 5}) {
      const std::vector<float> x = random.normal(batch * kSplitFeatures);
      auto outputs = session->run({{"input:0", HostTensor::from_values<float>({batch, kSplitFeatures}, x)}});
      ASSERT_EQ(outputs.count("1"), 1u);
      ASSERT_EQ(outputs.count("2"), 1u);
      EXPECT_EQ(outputs.at("1").shape(), (Shape{batch, kSplitFeatures}));
      EXPECT_EQ(outputs.at("2").shape(), (Shape{batch, 1}));
      std::vector<double> one, two;
      reference(x, batch, scale, one, two);
      const double error_one = rel_l2(floats_of(outputs.at("1")), one);
      const double error_two = rel_l2(floats_of(outputs.at("2")), two);
      std::printf("opset %lld, batch %lld: rel L2 output '1' %.2e, output '2' %.2e\n", static_cast<long long>(opset),
                  static_cast<long long>(batch), error_one, error_two);
      EXPECT_LT(error_one, 1e-5) << "opset " << opset;
      EXPECT_LT(error_two, 1e-6) << "opset " << opset;
    }
  }
}

}  // namespace
}  // namespace onda::test
