// CPU time a Session spends recording a run, per node and per dispatch, on a model whose GPU work is
// negligible (tiny tensors): what stays is the runtime's own cost (planning, allocation, kernel
// choice, bind groups), the figure issue 8 asks to keep under 20% of a model's wall time. The model
// is a chain of BLOCKS blocks of the op types the reference models record most (MatMul, Add, Mul,
// Relu, Transpose, Softmax, LayerNormalization, Conv, Concat + Slice), built in memory.
//
//   build/bench_session_recording [--blocks N] [--runs R]
//
// Prints the median over R runs (after two warm-up runs) of record ms, dispatches, us per node and
// us per dispatch, and the per-op-type recording time of the last run. Run it under `perf record -g`
// (or callgrind, see timed_runs) to see where the time goes.
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "onda/session.h"

using namespace onda;

namespace {

constexpr int64_t kRows = 16, kWidth = 32;

onnx::NodeProto* node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::string out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void int1(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void initializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, int type = onnx::TensorProto::FLOAT) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  if (type == onnx::TensorProto::INT64) {
    for (int64_t i = 0; i < n; ++i) t->add_int64_data(0);
    return;
  }
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = 0.01f * static_cast<float>((i * 37) % 101) - 0.5f;
  t->set_raw_data(v.data(), v.size() * sizeof(float));
}

void tensor_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                  std::vector<int64_t> dims) {
  auto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

// x [1, kRows, kWidth] through `blocks` blocks, each 12 nodes.
onnx::ModelProto chain_model(int blocks) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  auto* g = model.mutable_graph();
  g->set_name("recording");
  tensor_value(g->mutable_input(), "x", {1, kRows, kWidth});
  std::string v = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string p = fmt::format("b{}_", b);
    initializer(g, p + "w", {kWidth, kWidth});
    initializer(g, p + "bias", {kWidth});
    initializer(g, p + "scale", {kWidth});
    initializer(g, p + "cw", {kRows, kRows, 3});
    node(g, "MatMul", {v, p + "w"}, p + "mm");
    node(g, "Add", {p + "mm", p + "bias"}, p + "add");
    node(g, "Relu", {p + "add"}, p + "relu");
    ints(node(g, "Transpose", {p + "relu"}, p + "t1"), "perm", {0, 2, 1});
    ints(node(g, "Transpose", {p + "t1"}, p + "t2"), "perm", {0, 2, 1});
    node(g, "Mul", {p + "t2", p + "scale"}, p + "mul");
    int1(node(g, "Softmax", {p + "mul"}, p + "sm"), "axis", -1);
    node(g, "LayerNormalization", {p + "sm", p + "scale", p + "bias"}, p + "ln");
    ints(node(g, "Conv", {p + "ln", p + "cw"}, p + "conv"), "pads", {1, 1});
    int1(node(g, "Concat", {p + "conv", p + "ln"}, p + "cat"), "axis", 1);
    initializer(g, p + "starts", {1}, onnx::TensorProto::INT64);
    auto* ends = g->add_initializer();
    ends->set_name(p + "ends");
    ends->set_data_type(onnx::TensorProto::INT64);
    ends->add_dims(1);
    ends->add_int64_data(kRows);
    initializer(g, p + "axes", {1}, onnx::TensorProto::INT64);
    g->mutable_initializer(g->initializer_size() - 1)->set_int64_data(0, 1);
    node(g, "Slice", {p + "cat", p + "starts", p + "ends", p + "axes"}, p + "slice");
    node(g, "Add", {p + "slice", v}, p + "out");
    v = p + "out";
  }
  node(g, "Identity", {v}, "y");
  tensor_value(g->mutable_output(), "y", {1, kRows, kWidth});
  return model;
}

// The timed runs, in a function of their own so that a profiler can collect only them
// (valgrind --tool=callgrind --toggle-collect='*timed_runs*'): the warm-up compiles the pipelines.
[[gnu::noinline]] std::vector<double> timed_runs(Session& session, const std::map<std::string, HostTensor>& feeds,
                                                 int runs, RunStats& last) {
  std::vector<double> record_ms;
  for (int r = 0; r < runs; ++r) {
    session.run(feeds);
    last = session.last_run();
    record_ms.push_back(last.record_ms);
  }
  return record_ms;
}

}  // namespace

int main(int argc, char** argv) {
  int blocks = 40, runs = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--blocks") blocks = std::stoi(argv[i + 1]);
    if (std::string(argv[i]) == "--runs") runs = std::stoi(argv[i + 1]);
  }
  const auto path = std::filesystem::temp_directory_path() / fmt::format("onda_recording_{}.onnx", blocks);
  {
    std::ofstream file(path, std::ios::binary);
    file << chain_model(blocks).SerializeAsString();
  }
  auto session = Session::open(path);
  std::vector<float> x(kRows * kWidth, 0.25f);
  const std::map<std::string, HostTensor> feeds = {
      {"x", HostTensor::copy_of(DType::f32, {1, kRows, kWidth}, x.data(), x.size() * sizeof(float))}};
  for (int i = 0; i < 2; ++i) session->run(feeds);
  RunStats last;
  std::vector<double> record_ms = timed_runs(*session, feeds, runs, last);
  std::sort(record_ms.begin(), record_ms.end());
  const double median = record_ms[record_ms.size() / 2];
  const int nodes = blocks * 12 + 1;
  fmt::print("adapter: {}\n", session->adapter_name());
  fmt::print("{} nodes, {} dispatches per run: recording median {:.3f} ms = {:.2f} us per node, {:.2f} us per dispatch\n",
             nodes, last.dispatches, median, median * 1e3 / nodes, median * 1e3 / std::max<uint64_t>(1, last.dispatches));
  std::string by_op = "recording by op type (last run):";
  for (const auto& [op, ms] : last.record_ms_by_op) by_op += fmt::format(" {} {:.3f}", op, ms);
  fmt::print("{}\n", by_op);
  std::filesystem::remove(path);
  return 0;
}
