// An op keeps its kernel plans for its node across runs (ops/kernel_plans.h): the second run of a
// node records with the plans of the first and builds none, and still computes the right values
// from fresh inputs (float64 references, poisoned outputs). An op that calls a kernel several times
// (Cast to int8: Cast, Mul, Div) keeps one plan per call; a new shape plans once more. The same for
// the reduce and layout kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "ops/kernel_plans.h"
#include "ops/op_registry.h"

namespace onda::test {
namespace {

// Runs `node` through the op registry with GPU inputs and the node state `state`; returns output 0.
Tensor run_op(const Node& node, std::shared_ptr<void>& state, const std::vector<Tensor>& inputs,
              int64_t opset = 17) {
  auto& g = gpu();
  gpu::CommandRecorder recorder(g.context);
  ops::OpContext context{{g.context, g.pipelines}, recorder, g.pool, g.pool, opset, nullptr};
  context.to_device = [&](const ops::Value& v) {
    return v.device.defined()
               ? v.device
               : Tensor::upload(recorder, g.pool, v.host.dtype(), v.host.shape(), v.host.data());
  };
  context.node_state = &state;
  std::vector<ops::Value> values;
  for (const auto& t : inputs) values.push_back(ops::Value{.device = t});
  const ops::OpEntry* entry = ops::find_op(node.domain, node.op_type, context.opset);
  EXPECT_NE(entry, nullptr) << node.op_type;
  const auto outputs = entry->record(node, context, values);
  recorder.submit_and_wait();
  return outputs.at(0).device;
}

// A node of `op_type` with inputs named `inputs` and one output "y".
Node node_of(const std::string& op_type, std::vector<std::string> inputs) {
  Node node;
  node.op_type = op_type;
  node.inputs = std::move(inputs);
  node.outputs = {"y"};
  return node;
}

const ops::KernelPlans& kept_plans(const std::shared_ptr<void>& state) {
  EXPECT_NE(state, nullptr);
  return *static_cast<const ops::KernelPlans*>(state.get());
}

TEST(KernelPlans, SecondRunOfAnElementwiseNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("Add", {"a", "b"});
  std::shared_ptr<void> state;
  const Shape a_shape{5, 7}, b_shape{7};
  for (int run = 0; run < 3; ++run) {
    const std::vector<float> a = rng.normal(35), b = rng.normal(7);
    const Tensor y =
        run_op(node, state, {upload_floats(a, DType::f32, a_shape), upload_floats(b, DType::f32, b_shape)});
    std::vector<double> ref(35);
    for (int i = 0; i < 35; ++i) ref[i] = double(a[i]) + b[i % 7];
    EXPECT_LE(rel_l2(y.download_floats(gpu().context), ref), 1e-7) << "run " << run;
    EXPECT_EQ(kept_plans(state).elementwise.plans_built(), 1u) << "run " << run;
  }
  // Another shape is another problem: planned once, the first plan kept beside it.
  const std::vector<float> a = rng.normal(6), b = rng.normal(6);
  const Tensor y =
      run_op(node, state, {upload_floats(a, DType::f32, {6}), upload_floats(b, DType::f32, {6})});
  std::vector<double> ref(6);
  for (int i = 0; i < 6; ++i) ref[i] = double(a[i]) + b[i];
  EXPECT_LE(rel_l2(y.download_floats(gpu().context), ref), 1e-7);
  EXPECT_EQ(kept_plans(state).elementwise.plans_built(), 2u);
  EXPECT_EQ(kept_plans(state).elementwise.size(), 2u);
}

TEST(KernelPlans, NodeOfSeveralKernelCallsKeepsOnePlanEach) {
  Random rng(test_seed());
  Node node = node_of("Cast", {"x"});  // to INT8: Cast to int32, then the wrap (x * 2^24) / 2^24
  Attribute to;
  to.name = "to";
  to.value = int64_t{3};  // TensorProto.INT8
  node.attributes.push_back(to);
  std::shared_ptr<void> state;
  for (int run = 0; run < 2; ++run) {
    std::vector<float> x = rng.uniform(40, -300, 300);
    for (auto& v : x) v = std::trunc(v);
    const Tensor y = run_op(node, state, {upload_floats(x, DType::f32, {40})});
    const std::vector<uint8_t> bytes = y.download_bytes(gpu().context);
    ASSERT_EQ(bytes.size(), 40 * sizeof(int32_t));
    for (int i = 0; i < 40; ++i) {
      int32_t got;
      std::memcpy(&got, bytes.data() + 4 * i, 4);
      EXPECT_EQ(got, static_cast<int8_t>(static_cast<int32_t>(x[i]))) << x[i];
    }
    EXPECT_EQ(kept_plans(state).elementwise.plans_built(), 3u) << "run " << run;
  }
}

TEST(KernelPlans, SecondRunOfAReduceNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("ReduceMean", {"x"});
  Attribute axes;
  axes.name = "axes";
  axes.value = std::vector<int64_t>{1};
  node.attributes.push_back(axes);
  std::shared_ptr<void> state;
  const Shape shape{3, 9000, 2};  // column reduction of 9000 rows
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(element_count(shape), 1.0, 1.0);
    const Tensor y = run_op(node, state, {upload_floats(x, DType::f32, shape)}, 13);
    std::vector<double> ref(6, 0.0);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t r = 0; r < 9000; ++r)
        for (int64_t j = 0; j < 2; ++j) ref[2 * i + j] += x[(i * 9000 + r) * 2 + j] / 9000.0;
    EXPECT_LE(rel_l2(y.download_floats(gpu().context), ref), 1e-5) << "run " << run;
    EXPECT_EQ(kept_plans(state).reduce.plans_built(), 1u) << "run " << run;
  }
}

TEST(KernelPlans, SecondRunOfALayoutNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("Transpose", {"x"});
  std::shared_ptr<void> state;
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(16 * 24);
    const Tensor y = run_op(node, state, {upload_floats(x, DType::f32, {16, 24})});
    ASSERT_EQ(y.shape(), (Shape{24, 16}));
    std::vector<double> ref(16 * 24);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 24; ++j) ref[j * 16 + i] = x[i * 24 + j];
    EXPECT_EQ(rel_l2(y.download_floats(gpu().context), ref), 0.0) << "run " << run;
    EXPECT_EQ(kept_plans(state).layout.plans_built(), 1u) << "run " << run;
  }
}

TEST(KernelPlans, SecondRunOfAGatherNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("Gather", {"data", "indices"});
  std::shared_ptr<void> state;
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> data = rng.normal(5 * 3);
    std::vector<int64_t> idx(4);
    for (auto& i : idx) i = rng.integer(-5, 4);
    const Tensor indices = Tensor::upload(gpu().context, gpu().pool, DType::i64, {4}, idx.data());
    const Tensor y = run_op(node, state, {upload_floats(data, DType::f32, {5, 3}), indices});
    std::vector<double> ref;
    for (int64_t i : idx)
      for (int j = 0; j < 3; ++j) ref.push_back(data[((i + 5) % 5) * 3 + j]);
    EXPECT_EQ(rel_l2(y.download_floats(gpu().context), ref), 0.0) << "run " << run;
    EXPECT_EQ(kept_plans(state).gather.plans_built(), 1u) << "run " << run;
  }
}

TEST(KernelPlans, SecondRunOfASoftmaxNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("Softmax", {"x"});
  std::shared_ptr<void> state;
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(4 * 9);
    const Tensor y = run_op(node, state, {upload_floats(x, DType::f32, {4, 9})});
    std::vector<double> ref(36);
    for (int r = 0; r < 4; ++r) {
      double sum = 0;
      for (int j = 0; j < 9; ++j) sum += std::exp(double(x[r * 9 + j]));
      for (int j = 0; j < 9; ++j) ref[r * 9 + j] = std::exp(double(x[r * 9 + j])) / sum;
    }
    EXPECT_LE(rel_l2(y.download_floats(gpu().context), ref), 1e-6) << "run " << run;
    EXPECT_EQ(kept_plans(state).softmax.plans_built(), 1u) << "run " << run;
  }
}

TEST(KernelPlans, SecondRunOfANormalizationNodeDoesNotPlan) {
  Random rng(test_seed());
  Node node = node_of("InstanceNormalization", {"x", "scale", "bias"});
  std::shared_ptr<void> state;
  for (int run = 0; run < 2; ++run) {
    const std::vector<float> x = rng.normal(2 * 3 * 10), scale = rng.normal(3), bias = rng.normal(3);
    const Tensor y = run_op(node, state,
                            {upload_floats(x, DType::f32, {2, 3, 10}), upload_floats(scale, DType::f32, {3}),
                             upload_floats(bias, DType::f32, {3})});
    std::vector<double> ref(60);
    for (int r = 0; r < 6; ++r) {
      double mean = 0, var = 0;
      for (int k = 0; k < 10; ++k) mean += x[r * 10 + k] / 10.0;
      for (int k = 0; k < 10; ++k) var += (x[r * 10 + k] - mean) * (x[r * 10 + k] - mean) / 10.0;
      for (int k = 0; k < 10; ++k) {
        ref[r * 10 + k] = (x[r * 10 + k] - mean) / std::sqrt(var + 1e-5) * scale[r % 3] + bias[r % 3];
      }
    }
    EXPECT_LE(rel_l2(y.download_floats(gpu().context), ref), 1e-5) << "run " << run;
    EXPECT_EQ(kept_plans(state).normalize.plans_built(), 1u) << "run " << run;
  }
}

}  // namespace
}  // namespace onda::test
