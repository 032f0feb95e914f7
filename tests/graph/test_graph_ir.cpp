// Graph IR: topological sorting (random orders of random DAGs), validation errors, typed attribute
// access and the unsupported-op report.
#include <algorithm>
#include <map>
#include <numeric>

#include "graph/graph.h"
#include "graph/liveness.h"
#include "graph/model_error.h"
#include "graph/op_coverage.h"
#include "harness.h"

namespace onda {
namespace {

Node make_node(std::string op_type, std::vector<std::string> inputs, std::vector<std::string> outputs,
               std::string name = "") {
  Node node;
  node.op_type = std::move(op_type);
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  node.name = std::move(name);
  return node;
}

// A random DAG: node i reads the graph input, an initializer or outputs of earlier nodes.
Graph random_dag(std::mt19937_64& engine, int node_count) {
  Graph graph;
  graph.inputs = {"x"};
  graph.set_initializer("w", HostTensor(DType::f32, {2}));
  std::vector<std::string> available = {"x", "w"};
  for (int i = 0; i < node_count; ++i) {
    std::vector<std::string> inputs;
    const int arity = 1 + static_cast<int>(engine() % 3);
    for (int k = 0; k < arity; ++k) inputs.push_back(available[engine() % available.size()]);
    if (engine() % 5 == 0) inputs.push_back("");  // an omitted optional input
    const std::string output = "v" + std::to_string(i);
    graph.nodes.push_back(make_node("Op", inputs, {output}, "n" + std::to_string(i)));
    available.push_back(output);
  }
  graph.outputs = {available.back()};
  return graph;
}

void expect_producers_first(const Graph& graph) {
  std::set<std::string> defined = {"x", "w", ""};
  for (const Node& node : graph.nodes) {
    for (const std::string& input : node.inputs)
      ASSERT_TRUE(defined.count(input)) << node.name << " reads " << input;
    defined.insert(node.outputs.begin(), node.outputs.end());
  }
}

TEST(GraphIr, TopologicalSortOfShuffledRandomDags) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  for (int trial = 0; trial < 20; ++trial) {
    const Graph sorted = random_dag(engine, 1 + static_cast<int>(engine() % 40));
    Graph shuffled = sorted;
    std::shuffle(shuffled.nodes.begin(), shuffled.nodes.end(), engine);
    shuffled.sort_topologically();
    ASSERT_EQ(shuffled.nodes.size(), sorted.nodes.size()) << "seed " << seed;
    expect_producers_first(shuffled);
    EXPECT_NO_THROW(shuffled.validate()) << "seed " << seed;

    // Already sorted: the order is kept exactly.
    Graph again = sorted;
    again.sort_topologically();
    for (size_t i = 0; i < sorted.nodes.size(); ++i) EXPECT_EQ(again.nodes[i].name, sorted.nodes[i].name);
  }
}

TEST(GraphIr, SortAndValidateNameTheProblem) {
  Graph cycle;
  cycle.inputs = {"x"};
  cycle.nodes = {make_node("Add", {"x", "b"}, {"a"}, "first"), make_node("Relu", {"a"}, {"b"}, "second")};
  try {
    cycle.sort_topologically();
    ADD_FAILURE() << "a cycle was not detected";
  } catch (const ModelError& error) {
    EXPECT_NE(std::string(error.what()).find("cycle"), std::string::npos) << error.what();
  }

  Graph dangling;
  dangling.inputs = {"x"};
  dangling.nodes = {make_node("Add", {"x", "nowhere"}, {"y"}, "adder")};
  dangling.outputs = {"y"};
  try {
    dangling.sort_topologically();
    ADD_FAILURE() << "an undefined input was not detected";
  } catch (const ModelError& error) {
    EXPECT_NE(std::string(error.what()).find("'nowhere'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("adder"), std::string::npos) << error.what();
  }

  Graph twice;
  twice.inputs = {"x"};
  twice.nodes = {make_node("Relu", {"x"}, {"y"}, "one"), make_node("Relu", {"x"}, {"y"}, "two")};
  twice.outputs = {"y"};
  EXPECT_THROW(twice.validate(), ModelError);

  Graph missing_output;
  missing_output.inputs = {"x"};
  missing_output.nodes = {make_node("Relu", {"x"}, {"y"})};
  missing_output.outputs = {"z"};
  EXPECT_THROW(missing_output.validate(), ModelError);
}

TEST(GraphIr, SubgraphsReadOuterScope) {
  auto then_branch = std::make_shared<Graph>();
  then_branch->nodes = {make_node("Relu", {"outer"}, {"t"})};  // reads the parent's value
  then_branch->outputs = {"t"};
  auto else_branch = std::make_shared<Graph>();
  else_branch->nodes = {make_node("Neg", {"outer"}, {"e"})};
  else_branch->outputs = {"e"};

  Graph graph;
  graph.inputs = {"x", "cond"};
  Node if_node = make_node("If", {"cond"}, {"y"}, "branch");
  if_node.attributes.push_back({"then_branch", std::shared_ptr<const Graph>(then_branch)});
  if_node.attributes.push_back({"else_branch", std::shared_ptr<const Graph>(else_branch)});
  // The If node is listed before the producer of "outer", which its subgraphs read: sorting must
  // count outer-scope reads as dependencies.
  graph.nodes = {if_node, make_node("Abs", {"x"}, {"outer"}, "producer")};
  graph.outputs = {"y"};
  EXPECT_THROW(graph.validate(), ModelError);
  graph.sort_topologically();
  EXPECT_EQ(graph.nodes[0].name, "producer");
  EXPECT_NO_THROW(graph.validate());
  EXPECT_EQ(graph.node_count_recursive(), 4u);
  EXPECT_EQ(graph.nodes[1].attribute_graph("then_branch").nodes[0].op_type, "Relu");
}

TEST(GraphIr, TypedAttributeAccess) {
  Node node = make_node("Conv", {"x", "w"}, {"y"}, "conv1");
  node.attributes.push_back({"group", int64_t{2}});
  node.attributes.push_back({"pads", std::vector<int64_t>{1, 1, 1, 1}});
  node.attributes.push_back({"alpha", 0.5f});
  node.attributes.push_back({"auto_pad", std::string("NOTSET")});
  EXPECT_EQ(node.attribute_int("group"), 2);
  EXPECT_EQ(node.attribute_int("missing", 7), 7);
  EXPECT_EQ(node.attribute_ints("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(node.attribute_float("alpha"), 0.5f);
  EXPECT_EQ(node.attribute_string("auto_pad"), "NOTSET");
  EXPECT_EQ(node.attribute_ints("strides", {1, 1}), (std::vector<int64_t>{1, 1}));
  try {
    node.attribute_float("group");
    ADD_FAILURE() << "wrong attribute type not reported";
  } catch (const ModelError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("conv1"), std::string::npos) << message;
    EXPECT_NE(message.find("'group' is int, expected float"), std::string::npos) << message;
  }
  EXPECT_THROW(node.attribute_ints("kernel_shape"), ModelError);
}

TEST(GraphIr, UnsupportedOpsAreAllListed) {
  auto body = std::make_shared<Graph>();
  body->inputs = {"i"};
  body->nodes = {make_node("Exotic", {"i"}, {"o"}, "inner")};
  body->outputs = {"o"};

  Graph graph;
  graph.inputs = {"x", "c"};
  graph.nodes = {make_node("Relu", {"x"}, {"a"}, "relu"), make_node("STFT", {"a"}, {"b"}, "stft_0"),
                 make_node("STFT", {"b"}, {"d"}, "stft_1"), make_node("If", {"c"}, {"e"}, "cond")};
  Node custom = make_node("Gelu", {"d"}, {"f"}, "gelu");
  custom.domain = "com.microsoft";
  graph.nodes.push_back(custom);
  graph.nodes[3].attributes.push_back({"then_branch", std::shared_ptr<const Graph>(body)});

  const std::set<std::pair<std::string, std::string>> supported = {{"ai.onnx", "Relu"}, {"", "If"}};
  const std::vector<UnsupportedOp> missing = find_unsupported_ops(graph, supported);
  ASSERT_EQ(missing.size(), 4u);
  EXPECT_EQ(missing[0].op_type, "STFT");
  EXPECT_EQ(missing[0].domain, "");
  EXPECT_EQ(missing[0].node_name, "stft_0");
  EXPECT_EQ(missing[2].node_name, "cond/then_branch/inner");
  EXPECT_EQ(missing[3].domain, "com.microsoft");
  const std::string message = describe_unsupported_ops(missing);
  std::printf("%s\n", message.c_str());
  EXPECT_NE(message.find("3 unsupported op types (4 nodes)"), std::string::npos) << message;
  EXPECT_NE(message.find("ai.onnx::STFT x2 (stft_0, stft_1)"), std::string::npos) << message;
  EXPECT_NE(message.find("com.microsoft::Gelu x1"), std::string::npos) << message;

  EXPECT_TRUE(
      find_unsupported_ops(graph, [](std::string_view, std::string_view, int64_t) { return true; }).empty());
  // The predicate sees the model's opset version of the node's domain (subgraphs: the model's too).
  graph.opset_imports = {{"", 17}, {"com.microsoft", 1}};
  body->opset_imports = graph.opset_imports;
  const auto before_opset_18 = [](std::string_view domain, std::string_view, int64_t version) {
    return domain.empty() ? version < 18 : version == 1;
  };
  EXPECT_TRUE(find_unsupported_ops(graph, before_opset_18).empty());
  graph.opset_imports[0].version = 18;
  EXPECT_EQ(find_unsupported_ops(graph, before_opset_18).size(), 4u);  // Relu, STFT x2, If (body still 17)
}

TEST(GraphIr, HostTensorSharesAndCopiesOnWrite) {
  HostTensor a = HostTensor::from_values<int64_t>({2, 2}, {1, 2, 3, 4});
  HostTensor shared = a;
  EXPECT_EQ(shared.data(), a.data());  // handles share bytes
  HostTensor deep = a.clone();
  deep.mutable_data()[0] = std::byte{9};
  EXPECT_EQ(a.values<int64_t>()[0], 1);
  EXPECT_EQ(a.reshaped({4}).to_int64(), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_THROW(a.reshaped({3}), ModelError);
  EXPECT_THROW(a.values<float>(), ModelError);

  // Borrowed bytes are copied before the first write, so the owner's bytes stay unchanged.
  auto owner = std::make_shared<std::vector<float>>(std::vector<float>{1.0f, 2.0f});
  HostTensor borrowed =
      HostTensor::borrow(DType::f32, {2}, owner, reinterpret_cast<const std::byte*>(owner->data()), 8);
  EXPECT_EQ(borrowed.data(), reinterpret_cast<const std::byte*>(owner->data()));
  float* writable = reinterpret_cast<float*>(borrowed.mutable_data());
  writable[0] = 5.0f;
  EXPECT_EQ((*owner)[0], 1.0f);
  EXPECT_EQ(borrowed.to_double(), (std::vector<double>{5.0, 2.0}));
  EXPECT_THROW(HostTensor::copy_of(DType::f32, {3}, owner->data(), 8), ModelError);
  EXPECT_THROW(HostTensor(DType::f32, {2, -1}), ModelError);
}

// Floats out of int64's range (a fuzzer finding: a Split whose `split` input was a float 3e32) convert
// without undefined behaviour: truncated toward zero, saturated, NaN as 0.
TEST(GraphIr, HostTensorFloatToIntegerConversionsSaturate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const HostTensor f = HostTensor::from_values<float>({7}, {3e32f, -3e32f, nan, inf, -inf, 2.7f, -2.7f});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(f.to_int64(), (std::vector<int64_t>{kMax, kMin, 0, kMax, kMin, 2, -2}));
  const HostTensor i = HostTensor::from_double(DType::i64, {4}, {1e30, -1e30, std::nan(""), -3.9});
  EXPECT_EQ(i.to_int64(), (std::vector<int64_t>{kMax, kMin, 0, -3}));
  const HostTensor h = HostTensor::from_double(DType::f16, {2}, {1e9, -1e9});  // rounds to +-inf
  EXPECT_EQ(h.to_int64(), (std::vector<int64_t>{kMax, kMin}));
}

// Lifetimes on shuffled-and-sorted random DAGs, checked against a direct scan: a released value
// is never read by a later node, and every value read is released exactly once.
TEST(GraphIr, LifetimesReleaseEachValueAfterItsLastRead) {
  const uint64_t seed = test::test_seed();
  std::mt19937_64 engine(seed);
  for (int trial = 0; trial < 20; ++trial) {
    Graph graph = random_dag(engine, 1 + static_cast<int>(engine() % 40));
    graph.nodes.push_back(make_node("Unused", {"x"}, {"dead_end"}, "dead"));
    const std::vector<std::vector<std::string>> released = values_released_after(graph);
    std::map<std::string, int> release_count;
    for (size_t n = 0; n < released.size(); ++n)
      for (const std::string& name : released[n]) {
        ++release_count[name];
        for (size_t later = n + 1; later < graph.nodes.size(); ++later)
          for (const std::string& input : graph.nodes[later].inputs)
            EXPECT_NE(input, name) << "seed " << seed << ": " << name << " released after node " << n
                                   << " but read by node " << later;
      }
    std::set<std::string> run_time_values(graph.inputs.begin(), graph.inputs.end());
    for (const Node& node : graph.nodes) run_time_values.insert(node.outputs.begin(), node.outputs.end());
    for (const std::string& name : run_time_values) {
      const bool is_output =
          std::find(graph.outputs.begin(), graph.outputs.end(), name) != graph.outputs.end();
      bool read = false;
      for (const Node& node : graph.nodes)
        read |= std::count(node.inputs.begin(), node.inputs.end(), name) > 0;
      EXPECT_EQ(release_count[name], is_output || (!read && name == "x") ? 0 : 1)
          << "seed " << seed << ": " << name;
    }
    EXPECT_EQ(release_count["w"], 0);  // initializers are not run-time values
  }
}

}  // namespace
}  // namespace onda
