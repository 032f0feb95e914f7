// Every kernel family under a storage binding limit far below its tensors' sizes
// (SessionOptions::max_storage_binding_bytes, the smallest cap onda accepts: 64 KiB, where the
// tensors here are 0.4 to 1.5 MB). One model holds a node of each family; the same inputs run in a
// session with the adapter's own limit and in one with the cap, which must split its work over
// windows of its tensors instead of refusing. Layout ops move bits, so their outputs must be
// identical; arithmetic ones may sum in another order, so they must agree to float rounding. A few
// outputs are also checked against float64 references here (the kernels' own tests check the rest
// against theirs on the unsplit path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

constexpr uint64_t kSmallBinding = 64 << 10;
const Shape kInput = {1, 8, 96, 128};  // 384 KiB of float32

struct Output {
  std::string name;
  bool exact;  // a layout op: bit-identical under the cap
};

onnx::ModelProto every_family_model(Random& random, std::vector<Output>& outputs,
                                    std::vector<float>& matmul_w) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, kInput);
  auto output = [&](const std::string& name, bool exact) {
    add_float_output(g, name);
    outputs.push_back({name, exact});
  };
  // Layout: Transpose (tiled and gathered), Slice with steps, Pad (reflect and constant), Concat,
  // Split, Expand, Tile, Gather.
  add_ints_attribute(add_node(g, "Transpose", {"x"}, {"transpose_tiled"}), "perm", {0, 1, 3, 2});
  output("transpose_tiled", true);
  add_ints_attribute(add_node(g, "Transpose", {"x"}, {"transpose_outer"}), "perm", {0, 2, 1, 3});
  output("transpose_outer", true);
  add_int64_initializer(g, "slice_starts", {2}, {95, 1});
  add_int64_initializer(g, "slice_ends", {2}, {-200, 127});
  add_int64_initializer(g, "slice_axes", {2}, {2, 3});
  add_int64_initializer(g, "slice_steps", {2}, {-2, 3});
  add_node(g, "Slice", {"x", "slice_starts", "slice_ends", "slice_axes", "slice_steps"}, {"slice"});
  output("slice", true);
  add_int64_initializer(g, "pads", {8}, {0, 0, 3, 5, 0, 1, 2, 7});
  add_node(g, "Pad", {"x", "pads"}, {"pad_reflect"})->add_attribute()->CopyFrom([] {
    onnx::AttributeProto mode;
    mode.set_name("mode");
    mode.set_type(onnx::AttributeProto::STRING);
    mode.set_s("reflect");
    return mode;
  }());
  output("pad_reflect", true);
  add_node(g, "Pad", {"x", "pads"}, {"pad_constant"});
  output("pad_constant", true);
  add_int_attribute(add_node(g, "Concat", {"x", "transpose_tiled_back"}, {"concat"}), "axis", 3);
  output("concat", true);
  add_int64_initializer(g, "split_sizes", {2}, {50, 46});
  add_int_attribute(add_node(g, "Split", {"x", "split_sizes"}, {"split_a", "split_b"}), "axis", 2);
  output("split_a", true);
  output("split_b", true);
  add_int64_initializer(g, "expand_shape", {4}, {3, 8, 96, 128});
  add_node(g, "Expand", {"x", "expand_shape"}, {"expand"});
  output("expand", true);
  add_int64_initializer(g, "repeats", {4}, {1, 2, 1, 2});
  add_node(g, "Tile", {"x", "repeats"}, {"tile"});
  output("tile", true);
  add_int64_initializer(g, "gather_indices", {5}, {3, 0, 95, -1, 17});
  add_int_attribute(add_node(g, "Gather", {"x", "gather_indices"}, {"gather"}), "axis", 2);
  output("gather", true);
  // Arithmetic: elementwise with broadcasting, Softmax, reductions, MatMul, Conv, normalization.
  add_float_initializer(g, "row_scale", {128}, random.uniform(128, -1, 1));
  add_node(g, "Mul", {"x", "row_scale"}, {"mul"});
  add_node(g, "Add", {"mul", "transpose_tiled_back"}, {"add"});
  add_ints_attribute(add_node(g, "Transpose", {"transpose_tiled"}, {"transpose_tiled_back"}), "perm",
                     {0, 1, 3, 2});
  output("add", false);
  add_int_attribute(add_node(g, "Softmax", {"x"}, {"softmax"}), "axis", -1);
  output("softmax", false);
  add_int_attribute(add_node(g, "Softmax", {"x"}, {"softmax_axis2"}), "axis", 2);
  output("softmax_axis2", false);
  add_ints_attribute(add_node(g, "ReduceMean", {"x"}, {"reduce_mean"}), "axes", {3});
  output("reduce_mean", false);
  add_int64_initializer(g, "sum_axes", {1}, {2});
  add_node(g, "ReduceSum", {"x", "sum_axes"}, {"reduce_sum"});
  output("reduce_sum", false);
  matmul_w = random.uniform(128 * 96, -0.1, 0.1);
  add_float_initializer(g, "matmul_w", {128, 96}, matmul_w);
  add_node(g, "MatMul", {"x", "matmul_w"}, {"matmul"});
  output("matmul", false);
  add_node(g, "MatMul", {"transpose_outer", "matmul_w"}, {"matmul_4d"});
  output("matmul_4d", false);
  add_float_initializer(g, "conv_w", {16, 8, 3, 3}, random.uniform(16 * 8 * 9, -0.2, 0.2));
  add_float_initializer(g, "conv_b", {16}, random.uniform(16, -0.2, 0.2));
  add_ints_attribute(add_node(g, "Conv", {"x", "conv_w", "conv_b"}, {"conv"}), "pads", {1, 1, 1, 1});
  output("conv", false);
  add_float_initializer(g, "norm_scale", {8}, random.uniform(8, 0.5, 1.5));
  add_float_initializer(g, "norm_bias", {8}, random.uniform(8, -0.5, 0.5));
  add_node(g, "InstanceNormalization", {"x", "norm_scale", "norm_bias"}, {"instance_norm"});
  output("instance_norm", false);
  add_float_initializer(g, "ln_scale", {128}, random.uniform(128, 0.5, 1.5));
  add_float_initializer(g, "ln_bias", {128}, random.uniform(128, -0.5, 0.5));
  add_int_attribute(add_node(g, "LayerNormalization", {"x", "ln_scale", "ln_bias"}, {"layer_norm"}), "axis",
                    -1);
  output("layer_norm", false);
  return model;
}

std::unique_ptr<Session> open_with(const onnx::ModelProto& model, const TemporaryFolder& folder,
                                   uint64_t max_binding_bytes) {
  const auto path = folder.path() / "every_family.onnx";
  write_file(path, model.SerializeAsString());
  SessionOptions options;
  options.max_storage_binding_bytes = max_binding_bytes;
  return Session::open(path, options);
}

double rel_l2_of(std::span<const float> got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

TEST(BindingLimit, EveryFamilySplitsItsWorkUnderASmallBindingLimit) {
  Random random(test_seed());
  TemporaryFolder folder;
  std::vector<Output> outputs;
  std::vector<float> matmul_w;
  const onnx::ModelProto model = every_family_model(random, outputs, matmul_w);
  const std::vector<float> x = random.normal(shape_numel(kInput));
  const std::map<std::string, HostTensor> inputs = {{"x", HostTensor::from_values<float>(kInput, x)}};

  // Every node reads x (or a tensor of its size), six times the capped binding: each one splits.
  ASSERT_GT(x.size() * sizeof(float), 4 * kSmallBinding);
  auto normal = open_with(model, folder, 0)->run(inputs);
  auto capped_session = open_with(model, folder, kSmallBinding);
  auto capped = capped_session->run(inputs);
  for (const Output& o : outputs) {
    const auto want = normal.at(o.name).values<float>();
    const auto got = capped.at(o.name).values<float>();
    ASSERT_EQ(capped.at(o.name).shape(), normal.at(o.name).shape()) << o.name;
    std::vector<double> reference(want.begin(), want.end());
    const double error = rel_l2_of(got, reference);
    std::printf("%-16s %9zu elements  rel L2 to the unsplit run %.2e\n", o.name.c_str(), got.size(), error);
    if (o.exact) {
      int64_t mismatches = 0;
      for (size_t i = 0; i < got.size(); ++i) mismatches += std::memcmp(&got[i], &want[i], 4) != 0;
      EXPECT_EQ(mismatches, 0) << o.name;
    } else {
      EXPECT_LE(error, 1e-6) << o.name;
    }
  }

  // float64 references for a few: the split Transpose, MatMul and Softmax.
  const int64_t c = kInput[1], h = kInput[2], w = kInput[3];
  std::vector<double> transposed(x.size());
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t hi = 0; hi < h; ++hi)
      for (int64_t wi = 0; wi < w; ++wi) transposed[(hi * c + ci) * w + wi] = x[(ci * h + hi) * w + wi];
  EXPECT_EQ(rel_l2_of(capped.at("transpose_outer").values<float>(), transposed), 0.0);
  std::vector<double> softmax(x.size());
  for (int64_t row = 0; row < c * h; ++row) {
    double peak = -INFINITY, sum = 0;
    for (int64_t i = 0; i < w; ++i) peak = std::max<double>(peak, x[row * w + i]);
    for (int64_t i = 0; i < w; ++i) sum += std::exp(x[row * w + i] - peak);
    for (int64_t i = 0; i < w; ++i) softmax[row * w + i] = std::exp(x[row * w + i] - peak) / sum;
  }
  EXPECT_LE(rel_l2_of(capped.at("softmax").values<float>(), softmax), 1e-6);
  std::vector<double> product(c * h * 96, 0.0);
  for (int64_t row = 0; row < c * h; ++row)
    for (int64_t k = 0; k < w; ++k)
      for (int64_t j = 0; j < 96; ++j) product[row * 96 + j] += double{x[row * w + k]} * matmul_w[k * 96 + j];
  EXPECT_LE(rel_l2_of(capped.at("matmul").values<float>(), product), 1e-6);
}

}  // namespace
}  // namespace onda::test
