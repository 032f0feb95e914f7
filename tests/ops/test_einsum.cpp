// Einsum through the public Session against a float64 reference that loops over every assignment
// of the labels (the error measured against the same sum of |products|, float32's error scale): the
// conformance forms, grouped-linear and attention equations, broadcasting ellipses, three-input chains, and
// random equations. Each model runs twice with fresh inputs (the second run reuses the first run's buffers,
// so a result that is not fully rewritten shows). Equations that do not parse or do not match the ranks fail
// with an error naming the node.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>

#include "graph/model_error.h"
#include "graph/shape_inference.h"
#include "harness.h"
#include "onda/session.h"
#include "graph/einsum_equation.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

struct EinsumCase {
  std::string equation;
  std::vector<std::vector<int64_t>> shapes;
};

// out[output labels] = sum over all other labels of prod inputs[their labels] (size-1 dims broadcast).
// With `magnitude`, of |prod| instead: the scale of a float32 sum's rounding error (a sum that cancels
// to nearly 0 is still exact to ~1e-7 of it), against which the tests measure the error.
std::vector<double> reference(const EinsumEquation& eq, const std::vector<std::vector<int64_t>>& shapes,
                              const std::vector<std::vector<float>>& data, std::vector<int64_t>* out_shape,
                              bool magnitude = false) {
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t d = 0; d < shapes[i].size(); ++d)
      sizes[eq.inputs[i][d]] = std::max(sizes[eq.inputs[i][d]], shapes[i][d]);
  std::vector<char> labels;
  for (const auto& [ch, n] : sizes) labels.push_back(ch);
  out_shape->clear();
  for (char ch : eq.output) out_shape->push_back(sizes[ch]);
  int64_t out_count = 1;
  for (int64_t n : *out_shape) out_count *= n;
  std::vector<double> out(out_count, 0.0);
  std::map<char, int64_t> at;
  for (char ch : labels) at[ch] = 0;
  while (true) {
    double p = 1.0;
    for (size_t i = 0; i < shapes.size(); ++i) {
      int64_t index = 0;
      for (size_t d = 0; d < shapes[i].size(); ++d)
        index = index * shapes[i][d] + (shapes[i][d] == 1 ? 0 : at[eq.inputs[i][d]]);
      p *= data[i][index];
    }
    int64_t o = 0;
    for (size_t d = 0; d < eq.output.size(); ++d) o = o * (*out_shape)[d] + at[eq.output[d]];
    out[o] += magnitude ? std::abs(p) : p;
    size_t k = 0;
    for (; k < labels.size(); ++k) {
      if (++at[labels[k]] < sizes[labels[k]]) break;
      at[labels[k]] = 0;
    }
    if (k == labels.size()) break;
  }
  return out;
}

onnx::ModelProto einsum_model(const EinsumCase& c, const std::vector<int64_t>& out_shape) {
  onnx::ModelProto model = empty_model();
  auto* graph = model.mutable_graph();
  std::vector<std::string> names;
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    names.push_back(fmt::format("x{}", i));
    add_tensor_value(graph->mutable_input(), names.back(), onnx::TensorProto::FLOAT, c.shapes[i]);
  }
  add_tensor_value(graph->mutable_output(), "y", onnx::TensorProto::FLOAT, out_shape);
  onnx::NodeProto* node = add_node(graph, "Einsum", names, {"y"}, "einsum_node");
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(c.equation);
  return model;
}

double run_einsum_case(const EinsumCase& c, Random& rng) {
  std::vector<int64_t> ranks;
  for (const auto& s : c.shapes) ranks.push_back(static_cast<int64_t>(s.size()));
  const EinsumEquation eq = parse_einsum(c.equation, ranks);
  std::vector<int64_t> out_shape;
  std::vector<std::vector<float>> data;
  for (const auto& s : c.shapes) data.push_back(rng.normal(element_count(s)));
  reference(eq, c.shapes, data, &out_shape);
  TemporaryFolder folder;
  auto session = open_session(einsum_model(c, out_shape), folder);
  double worst = 0;
  for (int run = 0; run < 2; ++run) {
    if (run > 0)
      for (auto& d : data) d = rng.normal(d.size());
    const std::vector<double> ref = reference(eq, c.shapes, data, &out_shape);
    const std::vector<double> scale = reference(eq, c.shapes, data, &out_shape, true);
    std::map<std::string, HostTensor> feeds;
    for (size_t i = 0; i < data.size(); ++i) {
      feeds[fmt::format("x{}", i)] =
          HostTensor::copy_of(DType::f32, c.shapes[i], data[i].data(), data[i].size() * 4);
    }
    const HostTensor y = session->run(feeds).at("y");
    EXPECT_EQ(y.shape(), Shape(out_shape.begin(), out_shape.end())) << c.equation;
    const auto got = y.to_double();
    double error = 0, norm = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      error += (got[i] - ref[i]) * (got[i] - ref[i]), norm += scale[i] * scale[i];
    worst = std::max(worst, norm == 0 ? std::sqrt(error) : std::sqrt(error / norm));
  }
  return worst;
}

TEST(Einsum, ParsesImplicitAndEllipsisForms) {
  auto eq = parse_einsum("ij,jk", {2, 2});
  EXPECT_EQ(eq.output, "ik");
  eq = parse_einsum("...ii->...i", {4});
  EXPECT_EQ(eq.inputs[0], "01ii");
  EXPECT_EQ(eq.output, "01i");
  eq = parse_einsum("...ij,...jk->...ik", {3, 4});  // right-aligned ellipsis dims
  EXPECT_EQ(eq.inputs[0], "1ij");
  EXPECT_EQ(eq.inputs[1], "01jk");
  EXPECT_EQ(eq.output, "01ik");
  eq = parse_einsum(" b i , b j -> ", {2, 2});
  EXPECT_EQ(eq.output, "");
}

TEST(Einsum, ConformanceGroupedLinearAndAttentionForms) {
  Random rng(test_seed());
  const std::vector<EinsumCase> cases = {
      {"...ii->...i", {{3, 5, 5}}},                       // batch diagonal
      {"bij,bjk->bik", {{5, 2, 3}, {5, 3, 4}}},           // batch matmul
      {"i,i", {{5}, {5}}},                                // inner product
      {"ij->i", {{3, 4}}},                                // sum
      {"ij->ji", {{3, 4}}},                               // transpose
      {"ii", {{4, 4}}},                                   // trace
      {"btgi,gih->btgh", {{2, 7, 3, 5}, {3, 5, 6}}},      // grouped linear
      {"bhqd,bhkd->bhqk", {{2, 3, 6, 8}, {2, 3, 5, 8}}},  // attention scores
      {"bhqk,bhkd->bhqd", {{2, 3, 6, 5}, {2, 3, 5, 8}}},  // attention values
      {"bqhd,bkhd->bhqk", {{2, 6, 3, 8}, {2, 5, 3, 8}}},
      {"i,j->ij", {{4}, {3}}},                            // outer product
      {"ij,ij->ij", {{3, 4}, {3, 4}}},                    // Hadamard
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},         // chain
      {"...ij,...jk->...ik", {{1, 3, 4}, {2, 5, 4, 2}}},  // broadcast ellipsis (1 vs 5)
      {"bij->", {{2, 3, 4}}},
      {"ij,kj->ik", {{3, 4}, {5, 4}}},
      {"abc,cd->abd", {{2, 3, 4}, {4, 5}}},
  };
  for (const EinsumCase& c : cases) {
    const double e = run_einsum_case(c, rng);
    std::printf("  %-22s rel L2 %.2e\n", c.equation.c_str(), e);
    EXPECT_LE(e, 1e-6) << c.equation;
  }
}

// Random equations: 1-3 inputs of rank 0-4 over labels a-f (repeats inside a term allowed), the
// output a random ordered subset of the labels used.
TEST(Einsum, RandomEquationsMatchFloat64) {
  Random rng(test_seed());
  const int trials = 24;
  double worst = 0;
  for (int trial = 0; trial < trials; ++trial) {
    std::map<char, int64_t> sizes;
    for (char ch = 'a'; ch <= 'f'; ++ch) sizes[ch] = rng.integer(1, 4);
    EinsumCase c;
    std::set<char> used;
    const int inputs = static_cast<int>(rng.integer(1, 3));
    for (int i = 0; i < inputs; ++i) {
      std::string term;
      std::vector<int64_t> shape;
      const int rank = static_cast<int>(rng.integer(i == 0 ? 1 : 0, 4));
      for (int d = 0; d < rank; ++d) {
        const char ch = static_cast<char>('a' + rng.integer(0, 5));
        term += ch;
        used.insert(ch);
        shape.push_back(sizes[ch]);
      }
      c.equation += (i ? "," : "") + term;
      c.shapes.push_back(shape);
    }
    std::vector<char> pool(used.begin(), used.end());
    std::shuffle(pool.begin(), pool.end(), rng.engine());
    pool.resize(rng.integer(0, static_cast<int64_t>(pool.size())));
    c.equation += "->" + std::string(pool.begin(), pool.end());
    const double e = run_einsum_case(c, rng);
    EXPECT_LE(e, 1e-6) << c.equation;
    worst = std::max(worst, e);
  }
  std::printf("  %d random equations: worst rel L2 %.2e\n", trials, worst);
}

// Shape inference gives the output shape of an Einsum (size-1 dims broadcast) and names the node
// when the equation does not match the ranks.
TEST(Einsum, ShapeInferenceGivesTheOutputShape) {
  Node node;
  node.op_type = "Einsum";
  node.name = "einsum_node";
  node.inputs = {"a", "b"};
  node.outputs = {"y"};
  node.attributes.push_back({"equation", std::string("btgi,gih->btgh")});
  std::vector<std::optional<TensorType>> types = {TensorType{DType::f32, {2, 7, 3, 5}},
                                                  TensorType{DType::f32, {1, 5, 6}}};
  const auto out = infer_output_types(node, types, {nullptr, nullptr});
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].has_value());
  EXPECT_EQ(out[0]->shape, (Shape{2, 7, 3, 6}));
  types[1] = TensorType{DType::f32, {5, 6}};
  try {
    infer_output_types(node, types, {nullptr, nullptr});
    ADD_FAILURE() << "a rank mismatch was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("einsum_node"), std::string::npos) << e.what();
  }
}

std::string open_error(const EinsumCase& c, const std::vector<int64_t>& out_shape) {
  TemporaryFolder folder;
  try {
    auto session = open_session(einsum_model(c, out_shape), folder);
    std::map<std::string, HostTensor> feeds;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      std::vector<float> zeros(element_count(c.shapes[i]), 0.0f);
      feeds[fmt::format("x{}", i)] =
          HostTensor::copy_of(DType::f32, c.shapes[i], zeros.data(), zeros.size() * 4);
    }
    session->run(feeds);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(Einsum, BadEquationsNameTheNode) {
  for (const EinsumCase& c : std::vector<EinsumCase>{{"ij,jk->ik", {{2, 3}}},             // one term too many
                                         {"ijk->i", {{2, 3}}},                // rank mismatch
                                         {"i#->i", {{2, 3}}},                 // bad character
                                         {"ij->iz", {{2, 3}}},                // output label in no input
                                         {"ij->ii", {{2, 3}}},                // repeated output label
                                         {"ij,jk->ik", {{2, 3}, {4, 5}}}}) {  // sizes disagree
    const std::string message = open_error(c, {2});
    EXPECT_NE(message.find("einsum_node"), std::string::npos) << c.equation << ": " << message;
    std::printf("  %-12s %s\n", c.equation.c_str(), message.c_str());
  }
}

}  // namespace
}  // namespace onda::test
