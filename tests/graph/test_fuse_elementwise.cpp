// Elementwise groups as exporters write them become one onda::FusedElementwise node
// (graph/fuse_elementwise.h) whose run matches float64: GELU, an RMSNorm tail with Expand and Clip,
// a gate with a per-channel scale and a Where on a comparison, Pow with an int64 exponent, a chain
// of more inputs than one kernel binds. What must not fuse stays: an intermediate read by another
// node, by a subgraph or as a graph output; dynamic shapes; integer arithmetic. On the reference
// models, the expected groups form.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "graph/fuse_activations.h"
#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_epilogue.h"
#include "graph/fuse_group_norm.h"
#include "graph/fuse_matmul_bias.h"
#include "graph/fuse_rotate_half.h"
#include "graph/node_cost.h"
#include "graph/simplify.h"
#include "harness.h"
#include "reference_graphs.h"
#include "kernels/elementwise/fused_elementwise.h"
#include "onnx/onnx_loader.h"
#include "ops/fused_program.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

// --- Graph-level cases: shapes and types given directly. ---

Node make_node(std::string op_type, std::vector<std::string> inputs, std::vector<std::string> outputs) {
  Node node;
  node.op_type = std::move(op_type);
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.name = node.outputs[0] + "_node";
  return node;
}

void typed(Graph& graph, const std::string& name, Shape shape, DType dtype = DType::f32) {
  ValueInfo& info = graph.value(name);
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.dim_params.assign(info.shape->size(), "");
}

// x -> Div(sqrt 2) -> Erf -> Add(1) -> Mul(x) -> Mul(0.5) -> y, every value [2, 8, 50].
Graph gelu_graph() {
  Graph g;
  g.opset_imports = {{"", 17}};
  g.inputs = {"x"};
  g.set_initializer("sqrt2", HostTensor::from_double(DType::f32, {}, {std::sqrt(2.0)}));
  g.set_initializer("one", HostTensor::from_double(DType::f32, {}, {1.0}));
  g.set_initializer("half", HostTensor::from_double(DType::f32, {}, {0.5}));
  g.nodes = {make_node("Div", {"x", "sqrt2"}, {"d"}), make_node("Erf", {"d"}, {"e"}),
             make_node("Add", {"e", "one"}, {"a"}), make_node("Mul", {"x", "a"}, {"m"}),
             make_node("Mul", {"m", "half"}, {"y"})};
  g.outputs = {"y"};
  for (const char* name : {"x", "d", "e", "a", "m", "y"}) typed(g, name, {2, 8, 50});
  return g;
}

const Node* find_node(const Graph& g, std::string_view op_type) {
  for (const Node& node : g.nodes)
    if (node.op_type == op_type) return &node;
  return nullptr;
}

size_t count_nodes(const Graph& g, std::string_view op_type) {
  size_t n = 0;
  for (const Node& node : g.nodes) n += node.op_type == op_type;
  return n;
}

TEST(FuseElementwise, GeluBecomesOneNodeWithConstantsInItsBody) {
  Graph g = gelu_graph();
  EXPECT_EQ(fuse_elementwise(g), 1u);
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& fused = g.nodes[0];
  EXPECT_EQ(fused.domain, kOndaDomain);
  EXPECT_EQ(fused.op_type, kFusedElementwiseOp);
  EXPECT_EQ(fused.inputs, std::vector<std::string>{"x"});  // read twice, bound once
  EXPECT_EQ(fused.outputs, std::vector<std::string>{"y"});
  const Graph& body = fused.attribute_graph(kFusedElementwiseBody);
  EXPECT_EQ(body.nodes.size(), 5u);
  EXPECT_EQ(body.initializers.size(), 3u);
  EXPECT_TRUE(g.initializers.empty());  // the scalars moved into the body
  EXPECT_EQ(values_read_by(fused), std::vector<std::string>{"x"});
  EXPECT_NO_THROW(g.validate());
  // The profile's floor: x read and y written once; Div, Add, Mul, Mul 1 FLOP and Erf 4 per element.
  const TensorType type{DType::f32, {2, 8, 50}};
  const NodeCost cost = node_cost(fused, {type}, {type});
  EXPECT_TRUE(cost.modeled);
  EXPECT_EQ(cost.flops, 800.0 * 8);
  EXPECT_EQ(cost.bytes, 800.0 * 4 * 2);
}

TEST(FuseElementwise, IntermediatesReadOutsideTheGroupStay) {
  {  // Erf's output is also a graph output: {Div, Erf} and {Add, Mul, Mul} fuse apart.
    Graph g = gelu_graph();
    g.outputs.push_back("e");
    EXPECT_EQ(fuse_elementwise(g), 2u);
    EXPECT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"e"});
    EXPECT_NO_THROW(g.validate());
  }
  {  // Another (non-elementwise) node reads Add's output: it stays a value, the exit of a group.
    Graph g = gelu_graph();
    g.nodes.push_back(make_node("ReduceSum", {"a"}, {"s"}));
    typed(g, "s", {1, 1, 1});
    g.outputs.push_back("s");
    EXPECT_EQ(fuse_elementwise(g), 2u);
    ASSERT_NE(find_node(g, "ReduceSum"), nullptr);
    bool produced = false;
    for (const Node& node : g.nodes) produced = produced || node.outputs[0] == "a";
    EXPECT_TRUE(produced);
    EXPECT_NO_THROW(g.validate());
  }
  {  // A subgraph (an If branch) reads Mul's first output: the group ends there.
    Graph g = gelu_graph();
    auto branch = std::make_shared<Graph>();
    branch->nodes = {make_node("Identity", {"m"}, {"t"})};
    branch->outputs = {"t"};
    Node if_node = make_node("If", {"cond"}, {"z"});
    if_node.attributes.push_back({"then_branch", std::shared_ptr<const Graph>(branch)});
    if_node.attributes.push_back({"else_branch", std::shared_ptr<const Graph>(branch)});
    g.inputs.push_back("cond");
    typed(g, "cond", {}, DType::boolean);
    typed(g, "z", {2, 8, 50});
    g.nodes.push_back(if_node);
    g.outputs.push_back("z");
    EXPECT_EQ(fuse_elementwise(g), 1u);  // {Div, Erf, Add, Mul}; the last Mul alone stays
    EXPECT_NE(find_node(g, "Mul"), nullptr);
    bool m_produced = false;
    for (const Node& node : g.nodes) m_produced = m_produced || node.outputs[0] == "m";
    EXPECT_TRUE(m_produced);
    EXPECT_NO_THROW(g.validate());
  }
}

TEST(FuseElementwise, DynamicShapesAndIntegerArithmeticStay) {
  {
    Graph g = gelu_graph();
    g.value("e").shape = Shape{2, -1, 50};  // a symbolic dim
    g.value("e").dim_params = {"", "n", ""};
    // Erf (unknown output shape) and Add (an operand of unknown shape) stay, and with them the
    // Div that only Erf reads; the two Muls after Add still fuse.
    EXPECT_EQ(fuse_elementwise(g), 1u);
    EXPECT_NE(find_node(g, "Erf"), nullptr);
    EXPECT_NE(find_node(g, "Add"), nullptr);
    EXPECT_NE(find_node(g, "Div"), nullptr);
  }
  {  // Shape arithmetic in int64 (the runtime may hold it on the host): never fused.
    Graph g;
    g.inputs = {"n"};
    g.set_initializer("k", HostTensor::from_int64(DType::i64, {}, {3}));
    g.nodes = {make_node("Mul", {"n", "k"}, {"a"}), make_node("Add", {"a", "k"}, {"b"})};
    g.outputs = {"b"};
    for (const char* name : {"n", "a", "b"}) typed(g, name, {4}, DType::i64);
    EXPECT_EQ(fuse_elementwise(g), 0u);
    EXPECT_EQ(g.nodes.size(), 2u);
  }
  {  // Constants only (nothing computed at run time): left to constant folding and the host.
    Graph g;
    g.set_initializer("c", HostTensor::from_double(DType::f32, {16}, std::vector<double>(16, 2.0)));
    g.nodes = {make_node("Exp", {"c"}, {"a"}), make_node("Neg", {"a"}, {"b"})};
    g.outputs = {"b"};
    for (const char* name : {"a", "b"}) typed(g, name, {16});
    EXPECT_EQ(fuse_elementwise(g), 0u);
  }
}

// Sum of 12 distinct inputs as a chain of Adds: more inputs than one kernel binds, so several groups,
// each within the limit.
TEST(FuseElementwise, GroupsStayWithinTheKernelsInputLimit) {
  Graph g;
  g.opset_imports = {{"", 17}};
  std::string acc = "x0";
  g.inputs = {"x0"};
  typed(g, "x0", {3, 5});
  for (int k = 1; k < 12; ++k) {
    const std::string x = fmt::format("x{}", k), s = fmt::format("s{}", k);
    g.inputs.push_back(x);
    typed(g, x, {3, 5});
    typed(g, s, {3, 5});
    g.nodes.push_back(make_node("Add", {acc, x}, {s}));
    acc = s;
  }
  g.outputs = {acc};
  const size_t fused = fuse_elementwise(g);
  EXPECT_GE(fused, 2u);
  for (const Node& node : g.nodes) {
    EXPECT_LE(node.inputs.size(), kMaxFusedElementwiseInputs);
  }
  EXPECT_NO_THROW(g.validate());
}

// --- Sessions: the fused run against float64. ---

size_t fused_groups_in(const onnx::ModelProto& model) {
  Graph graph = parse_onnx_model(model.SerializeAsString(), ".", "elementwise test model");
  simplify_graph(graph, {});
  return fuse_elementwise(graph);
}

std::vector<float> run_model(const onnx::ModelProto& model, const std::map<std::string, HostTensor>& inputs,
                             const std::string& output, uint64_t max_binding_bytes = 0) {
  TemporaryFolder folder;
  write_file(folder.path() / "model.onnx", model.SerializeAsString());
  SessionOptions options;
  options.max_storage_binding_bytes = max_binding_bytes;
  auto session = Session::open(folder.path() / "model.onnx", options);
  return values_of(session->run(inputs).at(output));
}

TEST(FuseElementwise, ExporterPatternsMatchFloat64InASession) {
  Random rng(test_seed());
  const auto F = onnx::TensorProto::FLOAT;
  const int64_t b = 4, c = 24, t = 301;  // 113 KiB: two slices under 64 KiB bindings
  onnx::ModelProto model = empty_model();
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", F, {b, c, t});
  add_tensor_value(g->mutable_input(), "norm", F, {b, c, 1});
  const std::vector<float> x = rng.normal(static_cast<size_t>(b * c * t), 0.0, 2.0);
  const std::vector<float> norm = rng.uniform(static_cast<size_t>(b * c), -0.5, 3.0);
  const std::vector<float> gamma = rng.normal(static_cast<size_t>(c));
  add_float_initializer(g, "gamma", {c, 1}, gamma);
  add_float_initializer(g, "eps", {}, {0.25f});
  add_float_initializer(g, "scale", {1}, {4.0f});
  add_float_initializer(g, "zero", {}, {0.0f});
  add_float_initializer(g, "sqrt2", {}, {1.41421356f});
  add_float_initializer(g, "one", {}, {1.0f});
  add_float_initializer(g, "half", {}, {0.5f});
  add_int64_initializer(g, "two", {}, {2});
  add_int64_initializer(g, "shape", {3}, {b, c, t});
  // RMSNorm's tail: x / Expand(Clip(norm, eps)) * gamma * scale
  add_node(g, "Clip", {"norm", "eps"}, {"clipped"});
  add_node(g, "Expand", {"clipped", "shape"}, {"expanded"});
  add_node(g, "Div", {"x", "expanded"}, {"normed"});
  add_node(g, "Mul", {"normed", "gamma"}, {"scaled"});
  add_node(g, "Mul", {"scaled", "scale"}, {"r"});
  // GELU of r, then where(r > 0, gelu, r^2) (Pow with an int64 exponent).
  add_node(g, "Div", {"r", "sqrt2"}, {"g0"});
  add_node(g, "Erf", {"g0"}, {"g1"});
  add_node(g, "Add", {"g1", "one"}, {"g2"});
  add_node(g, "Mul", {"r", "g2"}, {"g3"});
  add_node(g, "Mul", {"g3", "half"}, {"gelu"});
  add_node(g, "Greater", {"r", "zero"}, {"positive"});
  add_node(g, "Pow", {"r", "two"}, {"square"});
  add_node(g, "Where", {"positive", "gelu", "square"}, {"y"});
  add_float_output(g, "y");
  // r is read by four nodes of the group: one group of 13 nodes, inputs x, norm, gamma.
  EXPECT_EQ(fused_groups_in(model), 1u);

  std::vector<double> ref(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t k = 0; k < t; ++k) {
        const size_t at = static_cast<size_t>((i * c + j) * t + k);
        const double r = x[at] / std::max<double>(norm[static_cast<size_t>(i * c + j)], 0.25) *
                         gamma[static_cast<size_t>(j)] * 4.0;
        ref[at] = r > 0 ? 0.5 * r * (1 + std::erf(r / std::sqrt(2.0))) : r * r;
      }
  const std::map<std::string, HostTensor> inputs = {
      {"x", HostTensor::from_values<float>({b, c, t}, x)},
      {"norm", HostTensor::from_values<float>({b, c, 1}, norm)}};
  // As on an adapter with 64 KiB bindings too: the fused kernel runs over slices of the batch.
  for (uint64_t binding : {uint64_t{0}, uint64_t{65536}}) {
    const double e = rel_l2(run_model(model, inputs, "y", binding), ref);
    std::printf("  RMSNorm tail + GELU + Where/Pow, one fused node, bindings %s: rel L2 %.2e vs float64\n",
                binding ? "64 KiB" : "unlimited", e);
    EXPECT_LE(e, 1e-6);
  }
}

TEST(FuseElementwise, ManyInputsSplitAndMatchFloat64InASession) {
  Random rng(test_seed());
  const auto F = onnx::TensorProto::FLOAT;
  onnx::ModelProto model = empty_model();
  auto* g = model.mutable_graph();
  std::map<std::string, HostTensor> inputs;
  std::vector<std::vector<float>> values;
  std::string acc;
  for (int k = 0; k < 12; ++k) {
    const std::string name = fmt::format("x{}", k);
    const Shape shape = k % 3 == 0 ? Shape{7, 33} : k % 3 == 1 ? Shape{33} : Shape{7, 1};
    add_tensor_value(g->mutable_input(), name, F, shape);
    values.push_back(rng.normal(static_cast<size_t>(element_count(shape))));
    inputs[name] = HostTensor::from_values<float>(shape, values.back());
    if (k == 0) {
      acc = name;
      continue;
    }
    const std::string s = fmt::format("s{}", k), a = fmt::format("a{}", k);
    add_node(g, k % 2 ? "Mul" : "Add", {acc, name}, {s});
    add_node(g, "Tanh", {s}, {a});
    acc = a;
  }
  add_node(g, "Identity", {acc}, {"y"});
  add_float_output(g, "y");
  EXPECT_GE(fused_groups_in(model), 2u);
  std::vector<double> ref(7 * 33);
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 33; ++j) {
      auto v = [&](int k) {
        const size_t at = static_cast<size_t>(k % 3 == 0 ? i * 33 + j : k % 3 == 1 ? j : i);
        return static_cast<double>(values[static_cast<size_t>(k)][at]);
      };
      double a = v(0);
      for (int k = 1; k < 12; ++k) a = std::tanh(k % 2 ? a * v(k) : a + v(k));
      ref[static_cast<size_t>(i * 33 + j)] = a;
    }
  const double e = rel_l2(run_model(model, inputs, "y"), ref);
  std::printf("  12 inputs, 22 ops in groups of at most %zu inputs: rel L2 %.2e vs float64\n",
              kMaxFusedElementwiseInputs, e);
  EXPECT_LE(e, 1e-6);
}

// --- The group as a normalization's epilogue (graph/fuse_epilogue.h). ---

// InstanceNormalization(x) -> y, then the GELU of gelu_graph() on y.
Graph norm_gelu_graph() {
  Graph g = gelu_graph();
  for (Node& node : g.nodes)
    for (std::string& input : node.inputs)
      if (input == "x") input = "y0";
  g.set_initializer("s", HostTensor::from_double(DType::f32, {8}, std::vector<double>(8, 1.5)));
  g.set_initializer("b", HostTensor::from_double(DType::f32, {8}, std::vector<double>(8, 0.1)));
  g.nodes.insert(g.nodes.begin(), make_node("InstanceNormalization", {"x", "s", "b"}, {"y0"}));
  typed(g, "y0", {2, 8, 50});
  return g;
}

TEST(FuseElementwise, GroupsBecomeTheEpilogueOfTheNormalizationFeedingThem) {
  {
    Graph g = norm_gelu_graph();
    EXPECT_EQ(fuse_elementwise(g), 1u);
    EXPECT_EQ(fuse_epilogues(g), 1u);
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op_type, "InstanceNormalization");
    EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(g.nodes[0].attribute_graph(kFusedEpilogueAttribute).nodes.size(), 5u);
    EXPECT_NO_THROW(g.validate());
    // The profile's floor counts the epilogue's ops (GELU: 8 per element) with the normalization's 5.
    const TensorType x{DType::f32, {2, 8, 50}}, affine{DType::f32, {8}};
    EXPECT_EQ(node_cost(g.nodes[0], {x, affine, affine}, {x}).flops, 800.0 * (5 + 8));
  }
  {  // The normalized value is also a graph output: it must be written, the group stays apart.
    Graph g = norm_gelu_graph();
    g.outputs.push_back("y0");
    fuse_elementwise(g);
    EXPECT_EQ(fuse_epilogues(g), 0u);
    EXPECT_EQ(g.nodes.size(), 2u);
  }
  {  // The group reads another tensor (a per-channel scale): not a pointwise epilogue.
    Graph g = norm_gelu_graph();
    g.set_initializer("gamma", HostTensor::from_double(DType::f32, {50}, std::vector<double>(50, 2.0)));
    g.nodes.back().inputs[1] = "gamma";
    fuse_elementwise(g);
    EXPECT_EQ(fuse_epilogues(g), 0u);
  }
  {  // LayerNormalization with its Mean output used: no epilogue.
    Graph g = norm_gelu_graph();
    g.nodes[0].op_type = "LayerNormalization";
    g.nodes[0].outputs = {"y0", "mean"};
    typed(g, "mean", {2, 8, 1});
    g.outputs.push_back("mean");
    fuse_elementwise(g);
    EXPECT_EQ(fuse_epilogues(g), 0u);
  }
}

TEST(FuseElementwise, InstanceNormWithGeluEpilogueMatchesFloat64InASession) {
  Random rng(test_seed());
  const auto F = onnx::TensorProto::FLOAT;
  const int64_t n = 2, c = 4, h = 30, w = 41;
  onnx::ModelProto model = empty_model();
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", F, {n, c, h, w});
  const std::vector<float> x = rng.normal(static_cast<size_t>(n * c * h * w), 1.0, 3.0);
  const std::vector<float> scale = rng.normal(static_cast<size_t>(c)),
                           bias = rng.normal(static_cast<size_t>(c));
  add_float_initializer(g, "scale", {c}, scale);
  add_float_initializer(g, "bias", {c}, bias);
  add_float_initializer(g, "sqrt2", {}, {1.41421356f});
  add_float_initializer(g, "one", {}, {1.0f});
  add_float_initializer(g, "half", {}, {0.5f});
  add_node(g, "InstanceNormalization", {"x", "scale", "bias"}, {"y0"});
  add_node(g, "Div", {"y0", "sqrt2"}, {"g0"});
  add_node(g, "Erf", {"g0"}, {"g1"});
  add_node(g, "Add", {"g1", "one"}, {"g2"});
  add_node(g, "Mul", {"y0", "g2"}, {"g3"});
  add_node(g, "Mul", {"g3", "half"}, {"y"});
  add_float_output(g, "y");
  {
    Graph graph = parse_onnx_model(model.SerializeAsString(), ".", "epilogue test model");
    simplify_graph(graph, {});
    fuse_elementwise(graph);
    EXPECT_EQ(fuse_epilogues(graph), 1u);
  }
  std::vector<double> ref(x.size());
  const int64_t plane = h * w;
  for (int64_t r = 0; r < n * c; ++r) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < plane; ++k) mean += x[static_cast<size_t>(r * plane + k)];
    mean /= static_cast<double>(plane);
    for (int64_t k = 0; k < plane; ++k) var += std::pow(x[static_cast<size_t>(r * plane + k)] - mean, 2);
    const double rstd = 1 / std::sqrt(var / static_cast<double>(plane) + 1e-5);
    for (int64_t k = 0; k < plane; ++k) {
      const size_t at = static_cast<size_t>(r * plane + k);
      const double v =
          (x[at] - mean) * rstd * scale[static_cast<size_t>(r % c)] + bias[static_cast<size_t>(r % c)];
      ref[at] = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    }
  }
  const double e =
      rel_l2(run_model(model, {{"x", HostTensor::from_values<float>({n, c, h, w}, x)}}, "y"), ref);
  std::printf("  InstanceNorm -> GELU as one dispatch chain: rel L2 %.2e vs float64\n", e);
  EXPECT_LE(e, 1e-6);
}

// On the reference models (zero-filled weights: structure only), the groups that form.
TEST(FuseElementwise, ReferenceModelsFuseTheirChains) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  // At least: MDX23C's 99 GELUs, HTDemucs's 56, BS-RoFormer's RMSNorm tails.
  const std::pair<const char*, size_t> expected[] = {
      {"mdx23c_vocals", 99}, {"htdemucs6", 56}, {"bsroformer_viperx1297", 111}, {"mpsenet", 1}};
  TemporaryFolder folder;
  for (const auto& [name, at_least] : expected) {
    std::optional<Graph> loaded = zero_weight_reference_graph(*models, name, folder);
    if (!loaded) continue;
    Graph& graph = *loaded;
    // The session's passes before fuse_elementwise, in its order (Session::Impl::simplified_for), but
    // not fuse_l2_norms: BS-RoFormer's RMSNorm tails stay elementwise groups here, as in an export
    // below opset 17 where that pass does not apply.
    simplify_graph(graph, {});
    const size_t biases = fuse_matmul_bias(graph);
    fuse_activations(graph);
    fuse_group_norms(graph);
    fuse_attention(graph);
    const size_t rotations = fuse_rotate_half(graph);
    std::printf("  %-22s %zu MatMul biases, %zu rotate_half fused\n", name, biases, rotations);
    if (std::string(name) == "bsroformer_viperx1297") {
      EXPECT_EQ(rotations, 48u) << "q and k of 24 transformers";
      EXPECT_GE(biases, 200u) << "its FFNs, gates and the mask estimators' MLPs";
    }
    const size_t before = graph.nodes.size();
    const size_t fused = fuse_elementwise(graph);
    size_t absorbed = 0;
    for (const Node& node : graph.nodes)
      if (node.op_type == kFusedElementwiseOp)
        absorbed += node.attribute_graph(kFusedElementwiseBody).nodes.size();
    std::printf("  %-22s %zu nodes -> %zu: %zu fused nodes absorbing %zu\n", name, before, graph.nodes.size(),
                fused, absorbed);
    EXPECT_GE(fused, at_least) << name;

    EXPECT_EQ(count_nodes(graph, kFusedElementwiseOp), fused) << name;
    // Every group translates into steps the kernel accepts for its inputs' types (plans built, no run).
    for (const Node& node : graph.nodes) {
      if (node.op_type != kFusedElementwiseOp) continue;
      kernels::FusedElementwiseProblem problem;
      for (const std::string& input : node.inputs) {
        problem.input_dtypes.push_back(*graph.find_value(input)->dtype);
        problem.input_shapes.push_back(*static_shape_of(graph, input));
      }
      EXPECT_NO_THROW({
        const ops::FusedProgram program =
            ops::fused_program_of(node, node.attribute_graph(kFusedElementwiseBody), problem.input_dtypes);
        problem.constants = program.constants;
        problem.steps = program.steps;
        problem.output_shape = program.output_shape;
        const kernels::FusedElementwise plan({gpu().context, gpu().pipelines}, problem);
        EXPECT_EQ(plan.output_dtype(), *graph.find_value(node.outputs[0])->dtype) << node.name;
      }) << name
         << " " << node.name;
    }
    // MDX23C's InstanceNorm -> GELU pairs (all but the first GELU, which follows a Conv).
    const size_t epilogues = fuse_epilogues(graph);
    for (const Node& node : graph.nodes) {
      if (!node.has_attribute(kFusedEpilogueAttribute)) continue;
      const DType dtype = *graph.find_value(node.outputs[0])->dtype;
      EXPECT_NO_THROW(kernels::render_epilogue(ops::fused_epilogue_of(node, dtype), dtype)) << node.name;
    }
    std::printf("  %-22s %zu of them moved into their normalization\n", name, epilogues);
    if (std::string_view(name) == "mdx23c_vocals") {
      EXPECT_EQ(epilogues, 98u);
    }
    EXPECT_NO_THROW(graph.validate()) << name;
  }
}

}  // namespace
}  // namespace onda::test
