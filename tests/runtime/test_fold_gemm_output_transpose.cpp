// A Reshape + Transpose after a product folded into the product's store
// (graph/fold_gemm_output_transpose.h): the layout arithmetic, the graph pass, and the permuted
// output against float64 on random inputs, with the adapter's storage binding limit and with a small
// one under which the product is computed whole and a copy transposed.
#include <gtest/gtest.h>

#include "graph/fold_gemm_output_transpose.h"
#include "harness.h"
#include "reference_graphs.h"
#include "test_graph_nodes.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

TEST(FoldGemmOutputTranspose, LayoutOfAHeadSplit) {
  // BS-RoFormer's 'b n (qkv h d) -> qkv b h n d': [62 x 801, 1536] as [62, 801, 3, 8, 64] -> [3, 62, 8, 801, 64].
  const std::optional<GemmOutputLayout> l = gemm_output_layout(62 * 801, 1536, {62, 801, 3, 8, 64}, std::vector<int64_t>{2, 0, 3, 1, 4});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->row_radix, (std::array<int64_t, 2>{801, 62}));
  EXPECT_EQ(l->row_stride, (std::array<int64_t, 3>{64, 8 * 801 * 64, 0}));
  EXPECT_EQ(l->col_radix, (std::array<int64_t, 2>{64, 8}));
  EXPECT_EQ(l->col_stride, (std::array<int64_t, 2>{801 * 64, 62 * 8 * 801 * 64}));
  // Dims that stay neighbours merge: [2, 3, 5, 4, 8] -> (0, 1, 3, 2, 4) keeps 2 x 3 together.
  const auto merged = gemm_output_layout(30, 32, {2, 3, 5, 4, 8}, std::vector<int64_t>{0, 1, 3, 2, 4});
  ASSERT_TRUE(merged);
  EXPECT_EQ(merged->row_radix, (std::array<int64_t, 2>{5, 6}));
  EXPECT_EQ(merged->row_stride, (std::array<int64_t, 3>{8, 160, 0}));
  // Not representable: the last axis moves, nothing moves, a dim spans rows and columns, the innermost
  // columns are not a multiple of 4 wide, more than three digits on a side.
  EXPECT_FALSE(gemm_output_layout(6, 8, {6, 2, 4}, std::vector<int64_t>{0, 2, 1}));
  EXPECT_FALSE(gemm_output_layout(6, 8, {6, 2, 4}, std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(gemm_output_layout(6, 8, {3, 4, 4}, std::vector<int64_t>{1, 0, 2}));
  EXPECT_FALSE(gemm_output_layout(6, 12, {6, 2, 6}, std::vector<int64_t>{1, 0, 2}));
  EXPECT_FALSE(gemm_output_layout(16, 4, {2, 2, 2, 2, 4}, std::vector<int64_t>{3, 1, 0, 2, 4}));
}

TEST(FoldGemmOutputTranspose, HeadSplitsFold) {
  Graph graph;
  graph.inputs = {"x"};
  declare_f32(graph, "x", {5, 7, 16});
  graph.set_initializer("w", HostTensor::from_values<float>({16, 48}, std::vector<float>(768, 0.5f)));
  set_ints(graph, "dims", {5, 7, 3, 2, 8});
  for (const char* name : {"p0", "p1", "p2", "p3"}) declare_f32(graph, name, {5, 7, 48});
  for (const char* name : {"r0", "r1", "r2", "r3"}) declare_f32(graph, name, {5, 7, 3, 2, 8});
  for (const char* name : {"t0", "t1", "t3"}) declare_f32(graph, name, {3, 5, 2, 7, 8});
  declare_f32(graph, "t2", {8, 2, 3, 7, 5});
  const auto head_split = [&](const std::string& i, std::vector<int64_t> perm) {
    graph.nodes.push_back(graph_node("MatMul", {"x", "w"}, {"p" + i}));
    graph.nodes.push_back(graph_node("Reshape", {"p" + i, "dims"}, {"r" + i}));
    graph.nodes.push_back(graph_node("Transpose", {"r" + i}, {"t" + i}));
    graph.nodes.back().set_attribute("perm", std::move(perm));
  };
  head_split("0", {2, 0, 3, 1, 4});   // folds
  head_split("1", {2, 0, 3, 1, 4});   // the Reshape's output is also a graph output: stays
  head_split("2", {4, 3, 2, 1, 0});   // the last axis moves: stays
  head_split("3", {2, 0, 3, 1, -1});  // a negative axis: folds
  graph.outputs = {"t0", "t1", "r1", "t2", "t3"};
  EXPECT_EQ(fold_gemm_output_transposes(graph), 2u);
  graph.validate();
  EXPECT_EQ(graph.nodes.size(), 2u + 3u + 3u);
  EXPECT_EQ(graph.nodes[0].outputs[0], "t0");
  EXPECT_EQ(graph.nodes[0].attribute_ints(kOutputPermAttribute), (std::vector<int64_t>{2, 0, 3, 1, 4}));
  EXPECT_EQ(graph.nodes[0].attribute_ints(kOutputDimsAttribute), (std::vector<int64_t>{5, 7, 3, 2, 8}));
  EXPECT_EQ(graph.nodes.back().outputs[0], "t3");
  EXPECT_EQ(graph.nodes.back().attribute_ints(kOutputPermAttribute), (std::vector<int64_t>{2, 0, 3, 1, 4}));
}

constexpr int64_t kB = 3, kT = 41, kFoldIn = 24, kFoldQkv = 3, kHeads = 4, kHead = 12, kFoldOut = kFoldQkv * kHeads * kHead;

// x [3, 41, 24] @ w + c, as [3, 41, 3, 4, 12] transposed to [3 (qkv), 3 (b), 4 (h), 41 (t), 12 (d)]
// (69 KiB: over the small binding limit below, where the product is transposed as a copy),
// then a Relu on the result (so that the fused product feeds another node).
onnx::ModelProto head_split_model(const std::vector<float>& w, const std::vector<float>& c) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* graph = model.mutable_graph();
  add_tensor_value(graph->mutable_input(), "x", onnx::TensorProto::FLOAT, {kB, kT, kFoldIn});
  add_float_initializer(graph, "w", {kFoldIn, kFoldOut}, w);
  add_float_initializer(graph, "c", {kFoldOut}, c);
  add_int64_initializer(graph, "dims", {5}, {kB, kT, kFoldQkv, kHeads, kHead});
  add_node(graph, "MatMul", {"x", "w"}, {"p"}, "to_qkv");
  add_node(graph, "Add", {"p", "c"}, {"pb"}, "to_qkv_bias");
  add_node(graph, "Reshape", {"pb", "dims"}, {"r"}, "split_heads");
  onnx::NodeProto* transpose = add_node(graph, "Transpose", {"r"}, {"t"}, "heads_first");
  add_ints_attribute(transpose, "perm", {2, 0, 3, 1, 4});
  add_node(graph, "Relu", {"t"}, {"y"}, "relu");
  add_float_output(graph, "y");
  return model;
}

TEST(FoldGemmOutputTranspose, PermutedProductMatchesFloat64) {
  Random random(test_seed());
  const std::vector<float> w = random.normal(kFoldIn * kFoldOut), c = random.normal(kFoldOut);
  TemporaryFolder folder;
  const auto path = folder.path() / "head_split.onnx";
  write_file(path, head_split_model(w, c).SerializeAsString());
  for (const uint64_t binding : {uint64_t{0}, uint64_t{64} << 10}) {  // 0: the adapter's limit
    SessionOptions options;
    options.max_storage_binding_bytes = binding;
    auto session = Session::open(path, options);
    for (int run = 0; run < 2; ++run) {  // the second run replays the first's recording
      const std::vector<float> x = random.normal(kB * kT * kFoldIn);
      auto outputs = session->run({{"x", HostTensor::from_values<float>({kB, kT, kFoldIn}, x)}});
      std::vector<double> expected(kB * kT * kFoldOut);
      for (int64_t b = 0; b < kB; ++b) {
        for (int64_t t = 0; t < kT; ++t) {
          for (int64_t j = 0; j < kFoldOut; ++j) {
            double s = c[j];
            for (int64_t k = 0; k < kFoldIn; ++k) s += double(x[(b * kT + t) * kFoldIn + k]) * w[k * kFoldOut + j];
            const int64_t q = j / (kHeads * kHead), h = j / kHead % kHeads, d = j % kHead;
            expected[(((q * kB + b) * kHeads + h) * kT + t) * kHead + d] = std::max(s, 0.0);
          }
        }
      }
      EXPECT_EQ(outputs.at("y").shape(), (Shape{kFoldQkv, kB, kHeads, kT, kHead}));
      EXPECT_LT(rel_l2(values_of(outputs.at("y")), expected), 1e-6) << "binding " << binding << " run " << run;
      if (binding == 0) {
        EXPECT_EQ(session->last_run().record_ms_by_op.count("Transpose"), 0u);
      }
    }
  }
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes.
TEST(FoldGemmOutputTranspose, ReferenceModelsFoldTheirHeadSplits) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  // BS-RoFormer: the Q/K/V projections of its 24 attentions. HTDemucs and MP-SENet's attentions read
  // their packed projections through strides already (fold_attention_transposes).
  const std::pair<const char*, size_t> expected[] = {
      {"mpsenet", 0}, {"htdemucs6", 0}, {"bsroformer_viperx1297", 24}};
  TemporaryFolder folder;
  for (const auto& [name, count] : expected) {
    std::optional<Graph> loaded = fused_reference_graph(*models, name, folder);
    if (!loaded) continue;
    size_t folded = 0;
    for (const Node& node : loaded->nodes) folded += node.has_attribute(kOutputPermAttribute);
    std::printf("  %-22s %zu products stored transposed\n", name, folded);
    EXPECT_EQ(folded, count) << name;
  }
}

}  // namespace
}  // namespace onda::test
