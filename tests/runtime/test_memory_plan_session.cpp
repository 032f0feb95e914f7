// The static memory plan through the Session: runs that follow the plan (and their replays) give
// the same bits as the traced run that allocated from the pool; memory_limit and the dry run.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "graph/host_tensor.h"
#include "onda/error.h"
#include "onda/session.h"
#include "test_onnx_support.h"

namespace onda {
namespace {

using test::add_node;
using test::add_tensor_value;

std::vector<std::byte> bytes_of(const onnx::ModelProto& model) {
  const std::string s = model.SerializeAsString();
  std::vector<std::byte> bytes(s.size());
  std::memcpy(bytes.data(), s.data(), s.size());
  return bytes;
}

// x [rows, 256] (rows < 0: dynamic) -> Relu -> MatMul(w) -> Sigmoid -> Add(x) -> Transpose -> Softmax -> y
// [256, rows]: intermediates of several sizes with lifetimes that cross.
onnx::ModelProto chain_model(int64_t rows) {
  onnx::ModelProto model = test::empty_model();
  auto* g = model.mutable_graph();
  onnx::ValueInfoProto* x = add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {rows, 256});
  onnx::ValueInfoProto* y = add_tensor_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {256, rows});
  if (rows < 0) {  // a dynamic row count
    x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("rows");
    y->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("rows");
  }
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(256);
  w->add_dims(256);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  for (int i = 0; i < 256 * 256; ++i) w->add_float_data(uniform(random));
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "MatMul", {"r", "w"}, {"m"}, "matmul");
  add_node(g, "Sigmoid", {"m"}, {"s"}, "sigmoid");
  add_node(g, "Add", {"s", "x"}, {"a"}, "add");
  onnx::NodeProto* t = add_node(g, "Transpose", {"a"}, {"t"}, "transpose");
  onnx::AttributeProto* perm = t->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  perm->add_ints(1);
  perm->add_ints(0);
  add_node(g, "Softmax", {"t"}, {"y"}, "softmax");
  return model;
}

// x [rows, 256] -> MatMul to widths 1024, 64, 512, 128 -> y [rows, 128]: every intermediate of its
// own size class, so the pool keeps one buffer of each (their sum) where the plan's two arenas hold
// the largest of the alternate ones (a node's input and output sit in different arenas).
onnx::ModelProto funnel_model(int64_t rows) {
  onnx::ModelProto model = test::empty_model();
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {rows, 256});
  add_tensor_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {rows, 128});
  std::mt19937 random(11);
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  const int64_t widths[] = {256, 1024, 64, 512, 128};
  std::string previous = "x";
  for (int i = 1; i < 5; ++i) {
    onnx::TensorProto* w = g->add_initializer();
    w->set_name("w" + std::to_string(i));
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(widths[i - 1]);
    w->add_dims(widths[i]);
    for (int64_t k = 0; k < widths[i - 1] * widths[i]; ++k) w->add_float_data(uniform(random));
    const std::string out = i == 4 ? "y" : "h" + std::to_string(i);
    add_node(g, "MatMul", {previous, w->name()}, {out}, "matmul" + std::to_string(i));
    previous = out;
  }
  return model;
}

HostTensor random_input(int64_t rows, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<size_t>(rows * 256));
  for (float& x : v) x = normal(random);
  return HostTensor::copy_of(DType::f32, {rows, 256}, v.data(), v.size() * 4);
}

bool same_bits(const HostTensor& a, const HostTensor& b) {
  return a.byte_size() == b.byte_size() && std::memcmp(a.data(), b.data(), a.byte_size()) == 0;
}

TEST(MemoryPlanSession, PlannedRunsAndReplaysMatchTheTracedRunBitForBit) {
  auto session = Session::open_bytes(bytes_of(funnel_model(96)));
  const HostTensor x1 = random_input(96, 1), x2 = random_input(96, 2);
  // Run 1 is traced (the pool's buffers, as without a plan; the plan is made on the side and reported
  // from run 2 on); the plan holds from run 2 on.
  const HostTensor y1 = session->run({{"x", x1}}).at("y");
  const RunStats traced = session->last_run();
  EXPECT_EQ(traced.planned_activation_bytes, 0u);
  const HostTensor y2 = session->run({{"x", x2}}).at("y");
  const RunStats planned = session->last_run();
  EXPECT_GT(planned.planned_activation_bytes, 0u);
  EXPECT_GE(planned.planned_activation_bytes, planned.live_activation_bytes);
  std::vector<HostTensor> later;
  for (const HostTensor* x : {&x1, &x2, &x1, &x2, &x1}) later.push_back(session->run({{"x", *x}}).at("y"));
  for (size_t i = 0; i < later.size(); ++i)
    EXPECT_TRUE(same_bits(later[i], i % 2 == 0 ? y1 : y2)) << "run " << i + 3;
  // Steady state: the arenas and nothing else (no fallback buffer), no more than the pool's bytes in
  // use at its peak (the pool also kept buffers of other size classes cached: it held more).
  const RunStats steady = session->last_run();
  EXPECT_EQ(steady.peak_activation_bytes, steady.planned_activation_bytes);
  EXPECT_GE(steady.peak_activation_bytes, steady.live_activation_bytes);
  EXPECT_LE(steady.planned_activation_bytes, traced.peak_activation_bytes);
  // A fresh session's first run (no plan at all) agrees too.
  auto fresh = Session::open_bytes(bytes_of(funnel_model(96)));
  EXPECT_TRUE(same_bits(fresh->run({{"x", x2}}).at("y"), y2));
}

TEST(MemoryPlanSession, TheChainsPlanIsNoLargerThanThePoolAndInstalled) {
  // The chain's intermediates share size classes, so the pool reuses its buffers; the plan's
  // separate arenas for bound-together tensors made it the larger until conflicts of tensors never
  // live at once were dropped: now it holds no more than the pool's peak and replaces the pool.
  auto session = Session::open_bytes(bytes_of(chain_model(96)));
  const HostTensor x = random_input(96, 5);
  const HostTensor first = session->run({{"x", x}}).at("y");
  const RunStats traced = session->last_run();
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(same_bits(session->run({{"x", x}}).at("y"), first)) << "run " << i + 2;
  const RunStats steady = session->last_run();
  EXPECT_GT(steady.planned_activation_bytes, 0u);
  EXPECT_LE(steady.planned_activation_bytes, traced.peak_activation_bytes);
  EXPECT_EQ(steady.peak_activation_bytes, steady.planned_activation_bytes);  // the arenas, installed
  EXPECT_EQ(steady.buffers_allocated, 0u);
}

TEST(MemoryPlanSession, NewShapesArePlannedAgain) {
  auto session = Session::open_bytes(bytes_of(chain_model(-1)));
  for (int64_t rows : {32, 80, 32}) {
    const HostTensor x = random_input(rows, static_cast<unsigned>(rows));
    const HostTensor first = session->run({{"x", x}}).at("y");
    for (int i = 0; i < 2; ++i) EXPECT_TRUE(same_bits(session->run({{"x", x}}).at("y"), first)) << rows;
  }
}

TEST(MemoryPlanSession, MemoryLimitFailsNamingTheNodeAndTheBytes) {
  SessionOptions options;
  options.memory_limit = 300 * 1024;  // the weights alone take 256 KiB
  auto session = Session::open_bytes(bytes_of(chain_model(96)), options);
  try {
    session->run({{"x", random_input(96, 3)}});
    FAIL() << "a run over memory_limit succeeded";
  } catch (const ModelError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("memory_limit of 307200 bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("bytes needed"), std::string::npos) << message;
    EXPECT_NE(message.find("'"), std::string::npos) << message;  // a node, by name
  }
  EXPECT_THROW(session->plan_memory({}), ModelError);
  options.memory_limit = 64 << 20;
  auto roomy = Session::open_bytes(bytes_of(chain_model(96)), options);
  EXPECT_NO_THROW(roomy->run({{"x", random_input(96, 3)}}));
}

TEST(MemoryPlanSession, DryRunPlansTheGraphsValues) {
  // x [1024] -> Relu -> Sigmoid -> y: x and r are bound together, r and y too; y takes x's bytes.
  onnx::ModelProto model = test::empty_model();
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {1024});
  add_tensor_value(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {1024});
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Reshape", {"r", "shape"}, {"v"}, "view");
  onnx::TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(32);
  shape->add_int64_data(32);
  add_node(g, "Sigmoid", {"v"}, {"s"}, "sigmoid");
  onnx::TensorProto* flat = g->add_initializer();
  flat->set_name("flat");
  flat->set_data_type(onnx::TensorProto::INT64);
  flat->add_dims(1);
  flat->add_int64_data(1024);
  add_node(g, "Reshape", {"s", "flat"}, {"y"}, "back");
  auto session = Session::open_bytes(bytes_of(model));
  const MemoryPlanReport report = session->plan_memory({});
  EXPECT_EQ(report.values, 3u);  // x, r (= v), s (= y): the views share their input's bytes
  EXPECT_EQ(report.live_peak_bytes, 8192u);
  EXPECT_EQ(report.activation_bytes, 8192u);
  EXPECT_EQ(report.arenas, 2u);
}

}  // namespace
}  // namespace onda
