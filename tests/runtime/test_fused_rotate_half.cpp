// Rotary embeddings' rotate_half as exporters write it (Split, Squeeze, Neg, Unsqueeze, Concat)
// fused into one onda::RotateHalf node (graph/fuse_rotate_half.h): the interleaved pairs of
// rotary-embedding-torch (BS-RoFormer) and the halves of GPT-NeoX-style models, in a session
// against float64 references; a Concat in the other order stays as it is. A rotation of pairs read
// only by its rotary sum is folded into that sum's FusedElementwise.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/fuse_rotate_half.h"
#include "harness.h"
#include "reference_graphs.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

const Shape kRotateX = {2, 8, 100, 64};  // 102400 elements: beyond host evaluation

onnx::AttributeProto* axis(onnx::NodeProto* node, int64_t value) {
  return add_int_attribute(node, "axis", value);
}

// pairs: x -> [.., 32, 2] -> Split(-1) -> Squeeze -> (Neg on the second) -> Unsqueeze -> Concat(-x1, x0)
//        -> [.., 64]; y = x * c + rot * s.
// halves: x -> Split(-1, [32, 32]) -> Concat(-x2, x1); z = x * c + rot * s.
// swapped: Concat(x1, -x0) of the halves (not rotate_half's sign): w = that, left unfused.
onnx::ModelProto rotary_model(const std::vector<float>& c, const std::vector<float>& s) {
  onnx::ModelProto model = empty_model();
  onnx::GraphProto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, kRotateX);
  add_float_initializer(g, "c", {100, 64}, c);
  add_float_initializer(g, "s", {100, 64}, s);
  add_int64_initializer(g, "pair_shape", {5}, {2, 8, 100, 32, 2});
  add_int64_initializer(g, "flat_shape", {4}, {2, 8, 100, 64});
  add_int64_initializer(g, "ones", {2}, {1, 1});
  add_int64_initializer(g, "halves", {2}, {32, 32});
  add_int64_initializer(g, "last", {1}, {-1});
  add_node(g, "Reshape", {"x", "pair_shape"}, {"xp"}, "to_pairs");
  axis(add_node(g, "Split", {"xp", "ones"}, {"p0", "p1"}, "pair_split"), -1);
  add_node(g, "Squeeze", {"p0", "last"}, {"q0"}, "squeeze0");
  add_node(g, "Squeeze", {"p1", "last"}, {"q1"}, "squeeze1");
  add_node(g, "Neg", {"q1"}, {"n1"}, "negate");
  add_node(g, "Unsqueeze", {"n1", "last"}, {"u1"}, "unsqueeze1");
  add_node(g, "Unsqueeze", {"q0", "last"}, {"u0"}, "unsqueeze0");
  axis(add_node(g, "Concat", {"u1", "u0"}, {"rp"}, "pair_concat"), -1);
  add_node(g, "Reshape", {"rp", "flat_shape"}, {"rot_pairs"}, "from_pairs");
  add_node(g, "Mul", {"x", "c"}, {"xc"}, "mul_cos");
  add_node(g, "Mul", {"rot_pairs", "s"}, {"rs"}, "mul_sin");
  add_node(g, "Add", {"xc", "rs"}, {"y"}, "rotary_pairs");
  axis(add_node(g, "Split", {"x", "halves"}, {"h0", "h1"}, "half_split"), 3);
  add_node(g, "Neg", {"h1"}, {"nh1"}, "negate_half");
  axis(add_node(g, "Concat", {"nh1", "h0"}, {"rot_halves"}, "half_concat"), 3);
  add_node(g, "Mul", {"x", "c"}, {"xc2"}, "mul_cos2");
  add_node(g, "Mul", {"rot_halves", "s"}, {"rs2"}, "mul_sin2");
  add_node(g, "Add", {"xc2", "rs2"}, {"z"}, "rotary_halves");
  axis(add_node(g, "Split", {"x", "halves"}, {"k0", "k1"}, "swap_split"), -1);
  add_node(g, "Neg", {"k0"}, {"nk0"}, "negate_swap");
  axis(add_node(g, "Concat", {"k1", "nk0"}, {"w"}, "swap_concat"), -1);
  for (const char* name : {"y", "z", "w"}) add_float_output(g, name);
  return model;
}

TEST(FuseRotateHalf, PairsAndHalvesRunAsOneNode) {
  Random random(test_seed());
  const std::vector<float> c = random.normal(100 * 64), s = random.normal(100 * 64);
  TemporaryFolder folder;
  auto session = open_session(rotary_model(c, s), folder);
  const std::vector<float> x = random.normal(shape_numel(kRotateX));
  auto outputs = session->run({{"x", HostTensor::from_values<float>(kRotateX, x)}});
  std::vector<double> y(x.size()), z(x.size()), w(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i) % 64, t = (static_cast<int64_t>(i) / 64) % 100;
    const double cos = c[t * 64 + j], sin = s[t * 64 + j];
    const double pair = j % 2 == 0 ? -double(x[i + 1]) : double(x[i - 1]);
    const double half = j < 32 ? -double(x[i + 32]) : double(x[i - 32]);
    y[i] = double(x[i]) * cos + pair * sin;
    z[i] = double(x[i]) * cos + half * sin;
    w[i] = j < 32 ? double(x[i + 32]) : -double(x[i - 32]);
  }
  EXPECT_LT(rel_l2(values_of(outputs.at("y")), y), 1e-6);
  EXPECT_LT(rel_l2(values_of(outputs.at("z")), z), 1e-6);
  EXPECT_LT(rel_l2(values_of(outputs.at("w")), w), 1e-6);
  const RunStats& stats = session->last_run();
  // The halves' rotation runs as a RotateHalf; the pairs' is read by its rotary sum
  // (fold_rotate_half_into_elementwise).
  EXPECT_EQ(stats.record_ms_by_op.count("RotateHalf"), 1u);
  // The swapped Concat stays: its Split, Neg and Concat are all that is left of those ops.
  EXPECT_EQ(stats.record_ms_by_op.count("Concat"), 1u);
  EXPECT_EQ(stats.record_ms_by_op.count("Neg"), 1u);
  // One rotation, two fused rotary sums, and the swapped Split (2), Neg and Concat (2: one per input).
  EXPECT_EQ(stats.dispatches, 8u);
}

// On the reference models (zero-filled weights: structure only), after the session's fusion passes:
// BS-RoFormer's 48 rotations of Q and K are read by their rotary sums.
TEST(FuseRotateHalf, ReferenceModelsFoldPairRotationsIntoTheirSums) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  TemporaryFolder folder;
  std::optional<Graph> loaded = fused_reference_graph(*models, "bsroformer_viperx1297", folder);
  if (!loaded) GTEST_SKIP() << "bsroformer_viperx1297 not found";
  size_t rotated = 0, rotate_half = 0;
  for (const Node& node : loaded->nodes) {
    rotated += node.attribute_ints(kRotatedInputsAttribute, {}).size();
    rotate_half += node.op_type == kRotateHalfOp;
  }
  EXPECT_EQ(rotated, 48u);
  EXPECT_EQ(rotate_half, 0u);
}

}  // namespace
}  // namespace onda::test
