// onda's public C++ API: load an ONNX model once, run it many times on the GPU.
//
//   auto session = onda::Session::open("model.onnx");
//   auto outputs = session->run({{"mix", input}});   // host tensors in, host tensors out
//
// Every node runs on the GPU (WebGPU); shape arithmetic that exporters emit is evaluated on the
// host once the input shapes are known. All dispatches of one run are recorded and submitted
// together. Errors (malformed model, unsupported op, bad input, device limit, device loss) are
// exceptions with messages that name the node and the problem.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/host_tensor.h"  // onda::HostTensor: dtype + shape + bytes in numpy layout

namespace onda {

struct SessionOptions {
  std::string adapter;   // index or name substring; "" = ONDA_ADAPTER or the high-performance adapter
  bool profile = false;  // GPU time per dispatch (timestamp queries), in RunStats::profile
  // Submit recorded work in pieces (the first after this many dispatches, each later one twice as
  // large, up to 64x) so the GPU runs while the CPU records the rest; 0: one submit per run.
  // Profiled runs always submit once.
  uint32_t first_submit_dispatches = 16;
  // Largest storage binding the kernels may use, in bytes (at least 64 KiB); 0 = the adapter's
  // maxStorageBufferBindingSize. Lower it to run a model as an adapter with smaller bindings would
  // (the kernels split their work over several bindings); the outputs do not change.
  uint64_t max_storage_binding_bytes = 0;
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // < 0: bound from the input at run time
};

struct ProfileLine {
  std::string op_type;
  std::string node;  // node name (or its first output's name)
  double gpu_ms = 0;
  uint64_t dispatches = 0;
  std::string input_shapes;  // e.g. "[1,64,128] [256,64,3] -" ("-": an omitted optional input)
};

struct RunStats {
  double wall_ms = 0;        // run() from inputs to outputs on the host
  double record_ms = 0;      // CPU time planning and recording dispatches
  double gpu_wait_ms = 0;    // from the last submit until the GPU finished
  uint64_t dispatches = 0;
  uint64_t submits = 0;      // command buffers submitted (see SessionOptions::first_submit_dispatches)
  // GPU memory, as buffer capacities (the pool's size classes). Values are released after their last
  // reader, so the activation peak follows the widest point of the graph, not the sum of all values.
  uint64_t peak_gpu_bytes = 0;         // peak_activation_bytes + weight_bytes
  uint64_t peak_activation_bytes = 0;  // inputs, intermediates and outputs of this run on loan at the peak
  uint64_t weight_bytes = 0;           // held across runs: uploaded initializers, prepacked weights, tables
  uint64_t buffers_allocated = 0;      // device buffers created while recording (0 once the pool is warm)
  std::vector<ProfileLine> profile;  // with SessionOptions::profile: per node, most expensive first
  // Profiled runs: GPU time from the first dispatch's start to the last one's end; minus the sum of
  // `profile`, the GPU's idle gaps between dispatches (each dispatch its own pass in such a run).
  double profile_span_ms = 0;
  // CPU time recording each op type (host ops: "host"; the chunked submits within the run: "(submit)").
  std::map<std::string, double> record_ms_by_op;
};

class Session {
 public:
  // Throws onda::ModelError listing every unsupported op at once, or naming what else is wrong.
  static std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options = {});
  ~Session();

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  std::string adapter_name() const;

  // Inputs by name (all graph inputs are required); returns every graph output by name.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);
  // Pipelined runs: submit() records a run and hands it to the GPU without waiting; collect()
  // waits for the oldest submitted run and returns its outputs. Recording run k+1 while the GPU
  // executes run k hides the CPU's recording time (onda separate feeds segments this way). Runs
  // execute in submission order; run() needs every submitted run collected first.
  void submit(const std::map<std::string, HostTensor>& inputs);
  std::map<std::string, HostTensor> collect();
  size_t runs_in_flight() const;
  // Of the last run() or collect(): gpu_wait_ms then counts from its submit to its outputs on the host.
  const RunStats& last_run() const;
  // Timestamp profiling of later runs (SessionOptions::profile sets it for the first): each
  // dispatch gets its own pass, which costs time, so timed runs should leave it off.
  void set_profiling(bool on);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onda
