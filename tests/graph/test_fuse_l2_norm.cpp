// F.normalize(x, dim=-1) as PyTorch exports it (ReduceL2 -> Clip / Max -> [Expand] -> Div -> Muls) runs
// as one fused L2 normalization (graph/fuse_l2_norm.h): same values as the float64 definition, one
// dispatch, and no fusion where an intermediate is read elsewhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "graph/fuse_l2_norm.h"
#include "harness.h"
#include "kernels/norm/normalize_kernel.h"
#include "reference_graphs.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

enum class Floor { clip_input, max };

struct L2NormCase {
  int64_t rows, width;
  Floor floor;
  bool expand;      // the norm broadcast to x's shape by an Expand before the Div
  int muls;         // 0, 1 (a [width] gamma) or 2 (a scalar, then gamma)
  bool share_norm;  // the norm is also a graph output: nothing fuses
  int opset = 17;   // below 17 (no LayerNormalization) nothing fuses
};

TEST(FuseL2Norm, MatchesFloat64AndRunsAsOneDispatch) {
  Random r(test_seed());
  const float eps = 1e-12f;
  const L2NormCase cases[] = {{6, 512, Floor::clip_input, true, 2, false},   // BS-RoFormer's RMSNorm
                              {3, 24, Floor::max, false, 1, false},          {5, 40000, Floor::clip_input, false, 0, false},
                              {4, 8, Floor::clip_input, true, 2, false, 16}, {2, 64, Floor::clip_input, false, 1, true}};
  for (const auto& c : cases) {
    const Shape x_shape = {1, c.rows, c.width};
    auto x = r.normal(static_cast<size_t>(shape_numel(x_shape)), 0.5, 1.0);
    for (int64_t k = 0; k < c.width; ++k) x[static_cast<size_t>(k)] = 0.0f;  // a zero row: divides by eps
    const auto gamma = r.uniform(static_cast<size_t>(c.width), 0.5, 1.5);
    const float scale = std::sqrt(static_cast<float>(c.width));
    onnx::ModelProto model = empty_model();
    model.mutable_opset_import(0)->set_version(c.opset);
    auto* graph = model.mutable_graph();
    add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, x_shape);
    add_float_initializer(graph, "eps", {}, {eps});
    add_float_initializer(graph, "scale", {}, {scale});
    add_float_initializer(graph, "gamma", {c.width}, gamma);
    add_int64_initializer(graph, "x_shape", {3}, x_shape);
    add_ints_attribute(add_node(graph, "ReduceL2", {"x"}, {"norm"}, "reduce"), "axes", {-1});
    switch (c.floor) {
      case Floor::clip_input: add_node(graph, "Clip", {"norm", "eps"}, {"floored"}, "clip"); break;
      case Floor::max: add_node(graph, "Max", {"eps", "norm"}, {"floored"}, "max"); break;
    }
    std::string denominator = "floored";
    if (c.expand) {
      add_node(graph, "Expand", {"floored", "x_shape"}, {"expanded"}, "expand");
      denominator = "expanded";
    }
    add_node(graph, "Div", {"x", denominator}, {"normed"}, "div");
    std::string y = "normed";
    if (c.muls == 2) {
      add_node(graph, "Mul", {y, "scale"}, {"scaled"}, "mul_scale");
      y = "scaled";
    }
    if (c.muls >= 1) {
      add_node(graph, "Mul", {"gamma", y}, {"y"}, "mul_gamma");
      y = "y";
    }
    add_tensor_value(graph->mutable_output(), y, onnx::TensorProto::FLOAT, x_shape);
    if (c.share_norm) add_tensor_value(graph->mutable_output(), "norm", onnx::TensorProto::FLOAT, {1, c.rows, 1});
    TemporaryFolder folder;
    auto session = open_session(model, folder);
    auto outputs = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}});
    std::vector<double> ref(x.size());
    for (int64_t i = 0; i < c.rows; ++i) {
      double squares = 0;
      for (int64_t k = 0; k < c.width; ++k) squares += std::pow(double(x[i * c.width + k]), 2);
      const double denominator_value = std::max(std::sqrt(squares), double(eps));
      for (int64_t k = 0; k < c.width; ++k) {
        double v = x[i * c.width + k] / denominator_value;
        if (c.muls == 2) v *= scale;
        if (c.muls >= 1) v *= gamma[k];
        ref[i * c.width + k] = v;
      }
    }
    const auto got = outputs.at(y).to_double();
    const double e = rel_l2(std::vector<float>(got.begin(), got.end()), ref);
    const RunStats& stats = session->last_run();
    std::printf("  [%lld x %lld] muls %d%s%s, opset %d: rel L2 %.3g, %llu dispatches\n", static_cast<long long>(c.rows),
                static_cast<long long>(c.width), c.muls, c.expand ? ", Expand" : "", c.share_norm ? " (norm shared)" : "",
                c.opset, e, static_cast<unsigned long long>(stats.dispatches));
    EXPECT_LE(e, 1e-6);
    const bool fuses = !c.share_norm && c.opset >= 17;
    EXPECT_EQ(stats.record_ms_by_op.count("ReduceL2"), fuses ? 0u : 1u);
    if (fuses) {
      const uint64_t norm_dispatches = c.width <= kernels::fused_row_capacity(gpu().context.limits()) ? 1 : 2;
      EXPECT_EQ(stats.dispatches, norm_dispatches) << "the chain did not fuse";
    }
  }
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes.
TEST(FuseL2Norm, ReferenceModelsFuseTheirNormalizations) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  TemporaryFolder folder;
  std::optional<Graph> loaded = fused_reference_graph(*models, "bsroformer_viperx1297", folder);
  if (!loaded) GTEST_SKIP() << "bsroformer_viperx1297 not found";
  const Graph& graph = *loaded;
  size_t fused = 0, reductions = 0;
  for (const Node& node : graph.nodes) {
    fused += node.op_type == "LayerNormalization" && node.has_attribute(kL2NormAttribute);
    reductions += node.op_type == "ReduceL2";
  }
  std::printf("  bsroformer_viperx1297: %zu L2 norms fused, %zu ReduceL2 left\n", fused, reductions);
  // 24 transformers' attention and feed-forward RMSNorms, the band split's 62 and the final norms.
  EXPECT_GE(fused, 110u);
  EXPECT_EQ(reductions, 111u - fused);
}

}  // namespace
}  // namespace onda::test
