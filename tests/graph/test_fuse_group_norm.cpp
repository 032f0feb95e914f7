// GroupNorm as PyTorch exports it (Reshape -> InstanceNormalization -> Reshape -> Mul -> Add) runs
// as one fused normalization (graph/fuse_group_norm.h): same values as the float64 definition,
// fewer dispatches, and no fusion where an intermediate is read elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "graph/fuse_group_norm.h"
#include "kernels/norm/normalize_kernel.h"
#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

struct GroupNormCase {
  int64_t batch, channels, groups, length;
  bool scalar_weight;  // Mul by a scalar instead of a [C, 1] weight
  bool beta_first;     // Add(beta, y) instead of Add(y, beta)
  bool share_mul;      // the Mul's output is also a graph output: only the norm part may fuse
};

// float64 GroupNorm: per (n, group) mean/variance over C/G * length values, per-group affine of the
// InstanceNormalization, then per-channel weight and bias.
std::vector<double> reference(const GroupNormCase& c, const std::vector<float>& x, const std::vector<float>& s,
                              const std::vector<float>& b, const std::vector<float>& w, const std::vector<float>& beta,
                              std::vector<double>* after_mul) {
  const int64_t per_group = c.channels / c.groups, row = per_group * c.length;
  std::vector<double> y(x.size());
  after_mul->resize(x.size());
  for (int64_t n = 0; n < c.batch; ++n) {
    for (int64_t g = 0; g < c.groups; ++g) {
      const size_t base = static_cast<size_t>((n * c.groups + g) * row);
      double mean = 0, var = 0;
      for (int64_t k = 0; k < row; ++k) mean += x[base + k];
      mean /= static_cast<double>(row);
      for (int64_t k = 0; k < row; ++k) var += (x[base + k] - mean) * (x[base + k] - mean);
      var /= static_cast<double>(row);
      for (int64_t k = 0; k < row; ++k) {
        const int64_t channel = g * per_group + k / c.length;
        const double normed = (x[base + k] - mean) / std::sqrt(var + 1e-5) * s[g] + b[g];
        const double weighted = normed * (c.scalar_weight ? w[0] : w[channel]);
        (*after_mul)[base + k] = weighted;
        y[base + k] = weighted + beta[channel];
      }
    }
  }
  return y;
}

TEST(FuseGroupNorm, MatchesFloat64AndSavesDispatches) {
  Random r(test_seed());
  const GroupNormCase cases[] = {
      {1, 12, 3, 50, false, false, false}, {2, 8, 1, 33, true, true, false},
      {1, 6, 6, 5000, false, false, false}, {1, 10, 2, 7, false, false, true},
      {1, 4, 1, 9000, false, false, false}};  // a row of 36000: the two-dispatch path
  for (const auto& c : cases) {
    const Shape x_shape = {c.batch, c.channels, c.length};
    const auto x = r.normal(static_cast<size_t>(shape_numel(x_shape)), 0.3, 2.0);
    const auto s = r.uniform(static_cast<size_t>(c.groups), 0.5, 1.5), b = r.uniform(static_cast<size_t>(c.groups), -1, 1);
    const auto w = r.uniform(c.scalar_weight ? 1 : static_cast<size_t>(c.channels), -2, 2);
    const auto beta = r.uniform(static_cast<size_t>(c.channels), -1, 1);
    onnx::ModelProto model = empty_model();
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
    add_int64_initializer(graph, "grouped_shape", {3}, {c.batch, c.groups, -1});
    add_int64_initializer(graph, "x_shape", {3}, x_shape);
    add_float_initializer(graph, "s", {c.groups}, s);
    add_float_initializer(graph, "b", {c.groups}, b);
    add_float_initializer(graph, "w", c.scalar_weight ? std::vector<int64_t>{} : std::vector<int64_t>{c.channels, 1}, w);
    add_float_initializer(graph, "beta", {c.channels, 1}, beta);
    add_node(graph, "Reshape", {"x", "grouped_shape"}, {"grouped"}, "split");
    add_node(graph, "InstanceNormalization", {"grouped", "s", "b"}, {"normed"}, "norm");
    add_node(graph, "Reshape", {"normed", "x_shape"}, {"merged"}, "merge");
    add_node(graph, "Mul", {"merged", "w"}, {"weighted"}, "mul");
    add_node(graph, "Add", c.beta_first ? std::vector<std::string>{"beta", "weighted"} : std::vector<std::string>{"weighted", "beta"},
             {"y"}, "add");
    add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, x_shape);
    if (c.share_mul) add_tensor_value(graph->mutable_output(), "weighted", onnx::TensorProto::FLOAT, x_shape);
    TemporaryFolder folder;
    auto session = open_session(model, folder);
    auto outputs = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}});
    std::vector<double> after_mul;
    const auto ref = reference(c, x, s, b, w, beta, &after_mul);
    const auto y = outputs.at("y").to_double();
    const double e = rel_l2(std::vector<float>(y.begin(), y.end()), ref);
    std::printf("  [%lld, %lld, %lld] groups %lld%s: rel L2 %.3g, %llu dispatches\n", static_cast<long long>(c.batch),
                static_cast<long long>(c.channels), static_cast<long long>(c.length), static_cast<long long>(c.groups),
                c.share_mul ? " (Mul output shared)" : "", e,
                static_cast<unsigned long long>(session->last_run().dispatches));
    EXPECT_LE(e, 1e-6);
    const int64_t row = c.channels / c.groups * c.length;
    // One fused kernel for rows that fit a workgroup's registers, else statistics + apply.
    const uint64_t norm_dispatches = row <= kernels::fused_row_capacity(gpu().context.limits()) ? 1 : 2;
    if (c.share_mul) {
      const auto m = outputs.at("weighted").to_double();
      EXPECT_LE(rel_l2(std::vector<float>(m.begin(), m.end()), after_mul), 1e-6);
      EXPECT_EQ(session->last_run().dispatches, norm_dispatches + 1) << "the norm and Mul fuse, the Add stays";
    } else {
      EXPECT_EQ(session->last_run().dispatches, norm_dispatches) << "the Mul and Add were not fused";
    }
  }
}

}  // namespace
}  // namespace onda::test
