// Attention as exporters write it (MatMul -> [Mul/Div] -> Softmax -> MatMul, with Transposes and
// the scale in each place they put it) becomes one onda::Attention node (graph/fuse_attention.h):
// the fused run matches the unfused run and float64; shapes and uses that make the fusion inexact
// leave the graph alone. On the reference models, every attention fuses.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "graph/fold_attention_transposes.h"
#include "graph/fuse_attention.h"
#include "graph/simplify.h"
#include "harness.h"
#include "reference_graphs.h"
#include "onnx/onnx_loader.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// How a test graph spells attention.
enum class Form {
  scale_scores_mul,      // BS-RoFormer: MatMul(q, Transpose(k, [0, 1, 3, 2])) * c, 4-D [N, H, L, D]
  scale_scores_div,      // MatMul(q, kt) / c with K^T a graph input [B, D, Lk]
  scale_q_torch_mha,     // nn.MultiheadAttention (HTDemucs, MP-SENet): inputs [L, B, D], q / c, K^T by
                         // Transpose [1, 2, 0], V by Transpose [1, 0, 2], the output transposed back
  scale_k_mul,           // MatMul(q, Transpose(c * k, [0, 2, 1])), Softmax(axis = 2)
  softmax_over_queries,  // Softmax(axis = -2): not attention, must not fuse
};

struct FuseCase {
  const char* name;
  Form form;
  int64_t batch, lq, lk, d, dv;
  bool expose_scores;  // the first MatMul's output is also a graph output: must not fuse
};

// Logical Q [B, Lq, D], K [B, Lk, D], V [B, Lk, Dv] -> out [B, Lq, Dv] with the softmax over the
// keys (or, `over_queries`, over the queries) in float64.
std::vector<double> reference(const FuseCase& c, double scale, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v, bool over_queries) {
  std::vector<double> p(static_cast<size_t>(c.batch * c.lq * c.lk)),
      out(static_cast<size_t>(c.batch * c.lq * c.dv));
  for (int64_t b = 0; b < c.batch; ++b) {
    auto at = [&](int64_t i, int64_t j) -> double& {
      return p[static_cast<size_t>((b * c.lq + i) * c.lk + j)];
    };
    for (int64_t i = 0; i < c.lq; ++i)
      for (int64_t j = 0; j < c.lk; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < c.d; ++d)
          dot += double(q[(b * c.lq + i) * c.d + d]) * k[(b * c.lk + j) * c.d + d];
        at(i, j) = scale * dot;
      }
    const int64_t rows = over_queries ? c.lk : c.lq, cols = over_queries ? c.lq : c.lk;
    for (int64_t r = 0; r < rows; ++r) {
      auto cell = [&](int64_t x) -> double& { return over_queries ? at(x, r) : at(r, x); };
      double m = -INFINITY, sum = 0;
      for (int64_t x = 0; x < cols; ++x) m = std::max(m, cell(x));
      for (int64_t x = 0; x < cols; ++x) sum += cell(x) = std::exp(cell(x) - m);
      for (int64_t x = 0; x < cols; ++x) cell(x) /= sum;
    }
    for (int64_t i = 0; i < c.lq; ++i)
      for (int64_t e = 0; e < c.dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < c.lk; ++j) acc += at(i, j) * v[(b * c.lk + j) * c.dv + e];
        out[static_cast<size_t>((b * c.lq + i) * c.dv + e)] = acc;
      }
  }
  return out;
}

// [B, L, X] -> [L, B, X] (or back: the same swap of the first two axes).
std::vector<float> swap01(const std::vector<float>& x, int64_t a, int64_t b, int64_t inner) {
  std::vector<float> y(x.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t e = 0; e < inner; ++e) y[(j * a + i) * inner + e] = x[(i * b + j) * inner + e];
  return y;
}
// [B, L, D] -> [B, D, L]
std::vector<float> swap12(const std::vector<float>& x, int64_t batch, int64_t l, int64_t d) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < l; ++i)
      for (int64_t e = 0; e < d; ++e) y[(b * d + e) * l + i] = x[(b * l + i) * d + e];
  return y;
}

struct BuiltCase {
  onnx::ModelProto model;
  std::map<std::string, HostTensor> inputs;
  std::string output;
  bool output_swapped = false;  // the output is [Lq, B, Dv]
};

BuiltCase build(const FuseCase& c, double scale, const std::vector<float>& q, const std::vector<float>& k,
                const std::vector<float>& v) {
  BuiltCase built{empty_model(), {}, "out"};
  auto* g = built.model.mutable_graph();
  const auto F = onnx::TensorProto::FLOAT;
  auto input = [&](const std::string& name, const Shape& shape, const std::vector<float>& values) {
    add_tensor_value(g->mutable_input(), name, F, shape);
    built.inputs[name] = HostTensor::from_values<float>(shape, values);
  };
  const int64_t n = 2, h = c.batch / 2;  // the 4-D form splits the batch into [2, B / 2]
  std::string softmax_in = "scores";
  switch (c.form) {
    case Form::scale_scores_mul:
      input("q", {n, h, c.lq, c.d}, q);
      input("k", {n, h, c.lk, c.d}, k);
      input("v", {n, h, c.lk, c.dv}, v);
      // The scale as BS-RoFormer computes it: Pow(head_dim, -0.5) (constant folding leaves Pow).
      add_float_initializer(g, "c_base", {}, {static_cast<float>(1 / (scale * scale))});
      add_float_initializer(g, "c_exponent", {}, {-0.5f});
      add_node(g, "Pow", {"c_base", "c_exponent"}, {"c"});
      add_ints_attribute(add_node(g, "Transpose", {"k"}, {"kt"}), "perm", {0, 1, 3, 2});
      add_node(g, "MatMul", {"q", "kt"}, {"scores"});
      add_node(g, "Mul", {"scores", "c"}, {"scaled"});
      softmax_in = "scaled";
      break;
    case Form::scale_scores_div:
    case Form::softmax_over_queries:
      input("q", {c.batch, c.lq, c.d}, q);
      input("kt", {c.batch, c.d, c.lk}, swap12(k, c.batch, c.lk, c.d));
      input("v", {c.batch, c.lk, c.dv}, v);
      add_float_initializer(g, "c", {1}, {static_cast<float>(1 / scale)});
      add_node(g, "MatMul", {"q", "kt"}, {"scores"});
      add_node(g, "Div", {"scores", "c"}, {"scaled"});
      softmax_in = "scaled";
      break;
    case Form::scale_q_torch_mha:
      input("xq", {c.lq, c.batch, c.d}, swap01(q, c.batch, c.lq, c.d));
      input("xk", {c.lk, c.batch, c.d}, swap01(k, c.batch, c.lk, c.d));
      input("xv", {c.lk, c.batch, c.dv}, swap01(v, c.batch, c.lk, c.dv));
      add_float_initializer(g, "c", {}, {static_cast<float>(1 / scale)});
      add_ints_attribute(add_node(g, "Transpose", {"xq"}, {"q"}), "perm", {1, 0, 2});
      add_node(g, "Div", {"q", "c"}, {"qs"});
      add_ints_attribute(add_node(g, "Transpose", {"xk"}, {"kt"}), "perm", {1, 2, 0});
      add_ints_attribute(add_node(g, "Transpose", {"xv"}, {"v"}), "perm", {1, 0, 2});
      add_node(g, "MatMul", {"qs", "kt"}, {"scores"});
      break;
    case Form::scale_k_mul:
      input("q", {c.batch, c.lq, c.d}, q);
      input("k", {c.batch, c.lk, c.d}, k);
      input("v", {c.batch, c.lk, c.dv}, v);
      add_float_initializer(g, "c", {1, 1, 1}, {static_cast<float>(scale)});
      add_node(g, "Mul", {"c", "k"}, {"ks"});
      add_ints_attribute(add_node(g, "Transpose", {"ks"}, {"kt"}), "perm", {0, 2, 1});
      add_node(g, "MatMul", {"q", "kt"}, {"scores"});
      break;
  }
  auto* softmax = add_node(g, "Softmax", {softmax_in}, {"probs"});
  if (c.form == Form::scale_k_mul) add_int_attribute(softmax, "axis", 2);
  if (c.form == Form::softmax_over_queries) add_int_attribute(softmax, "axis", -2);
  add_node(g, "MatMul", {"probs", "v"}, {"attended"});
  if (c.form == Form::scale_q_torch_mha) {
    add_ints_attribute(add_node(g, "Transpose", {"attended"}, {"out"}), "perm", {1, 0, 2});
    built.output_swapped = true;
  } else {
    add_node(g, "Identity", {"attended"}, {"out"});
  }
  add_float_output(g, "out");
  if (c.expose_scores) add_float_output(g, "scores");
  return built;
}

size_t fused_in(const onnx::ModelProto& model) {
  Graph graph = parse_onnx_model(model.SerializeAsString(), ".", "attention test model");
  simplify_graph(graph, {});
  const size_t fused = fuse_attention(graph);
  size_t nodes = 0;
  for (const Node& node : graph.nodes)
    nodes += node.domain == kOndaDomain && node.op_type == kFusedAttentionOp;
  EXPECT_EQ(nodes, fused);
  return fused;
}

// Transposes folded into the fused node (graph/fold_attention_transposes.h).
size_t folded_in(const onnx::ModelProto& model) {
  Graph graph = parse_onnx_model(model.SerializeAsString(), ".", "attention test model");
  simplify_graph(graph, {});
  fuse_attention(graph);
  return fold_attention_transposes(graph);
}

std::vector<float> run(const BuiltCase& built) {
  TemporaryFolder folder;
  auto session = open_session(built.model, folder);
  const auto out = session->run(built.inputs).at(built.output).to_double();
  return {out.begin(), out.end()};
}

TEST(FuseAttention, EveryExportedFormMatchesUnfusedAndFloat64) {
  Random rng(test_seed());
  const FuseCase cases[] = {
      {"scores * pow(b, -0.5), K by Transpose", Form::scale_scores_mul, 6, 19, 45, 64, 64, false},
      {"scores / c, K^T given", Form::scale_scores_div, 3, 40, 70, 16, 24, false},
      {"q / c, torch MultiheadAttention layout", Form::scale_q_torch_mha, 4, 33, 33, 64, 64, false},
      {"c * k, Softmax axis 2", Form::scale_k_mul, 2, 1, 50, 32, 32, false},
      {"Softmax over the queries", Form::softmax_over_queries, 2, 12, 20, 8, 8, false},
      {"scores also a graph output", Form::scale_scores_mul, 4, 10, 10, 16, 16, true}};
  for (const FuseCase& c : cases) {
    const double scale = 1.5 / std::sqrt(static_cast<double>(c.d));
    const auto q = rng.normal(static_cast<size_t>(c.batch * c.lq * c.d));
    const auto k = rng.normal(static_cast<size_t>(c.batch * c.lk * c.d));
    const auto v = rng.normal(static_cast<size_t>(c.batch * c.lk * c.dv));
    const BuiltCase built = build(c, scale, q, k, v);
    const bool must_fuse = c.form != Form::softmax_over_queries && !c.expose_scores;
    EXPECT_EQ(fused_in(built.model), must_fuse ? 1u : 0u) << c.name;
    // The MultiheadAttention layout's Transposes (Q, K^T, V and the output) go into the node, so the
    // session run below reads and writes them through strides.
    EXPECT_EQ(folded_in(built.model), c.form == Form::scale_q_torch_mha ? 4u : 0u) << c.name;
    std::vector<double> ref = reference(c, scale, q, k, v, c.form == Form::softmax_over_queries);
    if (built.output_swapped) {  // [B, Lq, Dv] -> [Lq, B, Dv]
      std::vector<double> r(ref.size());
      for (int64_t b = 0; b < c.batch; ++b)
        for (int64_t i = 0; i < c.lq; ++i)
          for (int64_t e = 0; e < c.dv; ++e) r[(i * c.batch + b) * c.dv + e] = ref[(b * c.lq + i) * c.dv + e];
      ref = std::move(r);
    }
    const std::vector<float> out = run(built);
    const double e = rel_l2(out, ref);
    double e_unfused = 0;
    if (must_fuse) {
      // The same graph with the scores also an output: nothing fuses, the ops run one by one.
      FuseCase unfused_case = c;
      unfused_case.expose_scores = true;
      const BuiltCase unfused = build(unfused_case, scale, q, k, v);
      EXPECT_EQ(fused_in(unfused.model), 0u) << c.name;
      const std::vector<float> reference_run = run(unfused);
      e_unfused = rel_l2(out, std::vector<double>(reference_run.begin(), reference_run.end()));
      EXPECT_LE(e_unfused, 1e-5) << c.name;
    }
    std::printf("  %-40s B %lld Lq %lld Lk %lld D %lld: %s, rel L2 %.2e vs float64, %.2e vs unfused\n",
                c.name, static_cast<long long>(c.batch), static_cast<long long>(c.lq),
                static_cast<long long>(c.lk), static_cast<long long>(c.d), must_fuse ? "fused" : "not fused",
                e, e_unfused);
    EXPECT_LE(e, 1e-5) << c.name;
  }
}

// Every Softmax of the attention models becomes a fused node (zero-filled weights: structure only).
TEST(FuseAttention, ReferenceModelsFuseEveryAttention) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  const std::pair<const char*, size_t> expected[] = {
      {"htdemucs6", 10}, {"mpsenet", 8}, {"bsroformer_viperx1297", 24}};
  TemporaryFolder folder;
  for (const auto& [name, attentions] : expected) {
    std::optional<Graph> loaded = zero_weight_reference_graph(*models, name, folder);
    if (!loaded) continue;
    Graph& graph = *loaded;
    simplify_graph(graph, {});
    size_t softmaxes = 0;
    for (const Node& node : graph.nodes) softmaxes += node.op_type == "Softmax";
    const size_t fused = fuse_attention(graph);
    std::printf("  %-22s %zu Softmax, %zu attentions fused\n", name, softmaxes, fused);
    EXPECT_EQ(fused, attentions) << name;
  }
}

}  // namespace
}  // namespace onda::test
