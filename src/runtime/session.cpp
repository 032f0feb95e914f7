// Session: load -> check op coverage -> per run: bind inputs, walk the nodes in order (host
// evaluation where all inputs are host values and the op has a host implementation; GPU kernels
// otherwise), release each GPU value after its last use (graph/liveness.h) so the pool reuses its
// buffer, one submit, read the outputs back.
//
// Replay: the second run of a plan is also captured as a command tape (gpu/command_tape.h); later
// runs with the same input shapes and the same host-side input values (small index inputs that shape
// arithmetic reads), not profiled, replay the tape instead of walking the graph: the op layer costs
// more CPU per dispatch than Dawn, and a steady-state run records exactly the commands of the one
// before. The tape's buffers are claimed from the pools (BufferPool::claim) so no other work gets
// them. ONDA_REPLAY=0 turns replay off. A plan with If/Loop/Scan nodes keeps up to
// kMaxCapturesPerPlan captures, one per set of host input values (so one per branch when the branch
// follows host inputs); a run that planned a subgraph or read a condition back from the GPU is not
// captured (its tape would not hold the decision).
//
// Memory: three pools, so a run's peak is reported exactly and weights apart from activations.
// `pool` holds what lives within one run (inputs, intermediates, outputs): its peak is the run's
// activation peak. `weights_pool` holds initializers uploaded once and what ops derive from them
// (prepacked B); `persistent_pool` holds per-node tables (FFT twiddles, RNN weights) kept across runs.
#include "onda/session.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/command_tape.h"
#include "gpu/context.h"
#include "gpu/gpu_error.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "gpu/run_guards.h"
#include "gpu/transfer.h"
#include "graph/fuse_activations.h"
#include "graph/fuse_attention.h"
#include "graph/fuse_group_norm.h"
#include "graph/host_ops.h"
#include "graph/liveness.h"
#include "graph/model_error.h"
#include "graph/op_coverage.h"
#include "graph/simplify.h"
#include "onnx/onnx_loader.h"
#include "ops/op_registry.h"
#include "runtime/graph_walk.h"

namespace onda {
namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

using runtime::kMaxHostElements;
// Inputs up to this many elements also keep a host copy.
constexpr int64_t kTinyInput = 64;
// Captured runs kept per plan when its control flow can take different paths (see the top).
constexpr size_t kMaxCapturesPerPlan = 4;

}  // namespace

struct Session::Impl {
  Graph graph;
  std::vector<TensorSpec> input_specs, output_specs;
  gpu::Context context;
  gpu::BufferPool pool{context};
  gpu::BufferPool persistent_pool{context};
  gpu::BufferPool weights_pool{context};
  gpu::PipelineCache pipelines{context};
  std::unique_ptr<gpu::Profiler> profiler;
  // Initializers uploaded once, on first GPU use.
  std::unordered_map<std::string, Tensor> uploaded;
  // Small constants (biases, norm scales, folded shape tensors) a kernel needed on the GPU, by
  // their host data: uploaded once per plan instead of every run. Kept in persistent_pool, whose
  // buffers are never reused within a run, so a queue write cannot race with recorded work.
  std::map<const std::byte*, Tensor> uploaded_constants;
  // Per-node op state kept across runs (prepacked weights).
  std::unordered_map<const Node*, std::shared_ptr<void>> node_states;
  // Results of host-evaluated nodes whose inputs are all constants (results too large for the
  // simplifier to fold, e.g. a position embedding built from Range/Expand): the same every run, so
  // computed once per plan. Marked constant, their GPU copies are cached by to_device as well.
  std::unordered_map<const Node*, std::vector<HostTensor>> constant_host_results;
  // The graph simplified for the input shapes of the last run (shape arithmetic folded, dead nodes
  // removed), with its memory plan, op lookups and the plans of the subgraphs run so far:
  // re-planned only when the input shapes change.
  std::optional<runtime::WalkPlan> plan;
  std::map<std::string, Shape> plan_shapes;
  RunStats stats;

  bool profiling = false;
  uint32_t first_submit_dispatches = 0;

  Impl(Graph g, const SessionOptions& options)
      : graph(std::move(g)),
        context(gpu::ContextOptions{options.adapter}),
        first_submit_dispatches(options.first_submit_dispatches) {
    set_profiling(options.profile);
  }

  void set_profiling(bool on) {
    profiling = on;
    if (on && !profiler) profiler = std::make_unique<gpu::Profiler>(context);
  }

  Tensor upload(const HostTensor& host) {
    return Tensor::upload(context, pool, host.dtype(), host.shape(), host.data());
  }

  // A run recorded and submitted, waiting to be collected: its recorder (holding the resources its
  // commands use) and the readbacks of its outputs, recorded behind its last dispatch.
  struct PendingRun {
    std::chrono::steady_clock::time_point start, submitted;
    std::unique_ptr<gpu::CommandRecorder> recorder;
    RunStats stats;
    struct Output {
      std::string name;
      HostTensor host;  // outputs known on the host
      Tensor device;
      gpu::PendingDownload download;
    };
    std::vector<Output> outputs;
    // The run's guard words (gpu::RunGuards), read back after its outputs when a kernel set any.
    std::optional<gpu::PendingDownload> guards;
  };
  std::deque<PendingRun> pending;

  // The captured run of the current plan (see the top of this file).
  struct CapturedRun {
    gpu::CommandTape tape;
    // Where each GPU input lives, written before each replay. Not a Tensor: holding the input would
    // keep its buffer from the nodes that reuse it after its last reader.
    struct InputSlot {
      wgpu::Buffer buffer;
      uint64_t offset;
      DType dtype;
      int64_t numel;
    };
    std::map<std::string, InputSlot> device_inputs;
    std::map<std::string, HostTensor> host_inputs;  // read while recording: a replay needs the same values
    std::vector<PendingRun::Output> outputs;        // host values, or device tensors to read back
    RunStats stats;
    std::vector<std::shared_ptr<gpu::PooledBuffer>> claimed;
  };
  std::vector<std::unique_ptr<CapturedRun>> captured;  // of the current plan
  int plan_runs = 0;  // runs recorded with the current plan
  const bool replay_enabled = [] {
    const char* v = std::getenv("ONDA_REPLAY");
    return !(v && std::string(v) == "0");
  }();

  // The captured run these inputs can replay, or null.
  CapturedRun* find_capture(const std::map<std::string, HostTensor>& inputs,
                            const std::map<std::string, Shape>& shapes) const;
  void replay(CapturedRun& capture, const std::map<std::string, HostTensor>& inputs,
              std::chrono::steady_clock::time_point start);
  void submit(const std::map<std::string, HostTensor>& inputs);
  std::map<std::string, HostTensor> collect();
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

std::unique_ptr<Session> Session::open(const std::filesystem::path& model, const SessionOptions& options) {
  Graph graph = load_onnx_model(model);
  auto unsupported = find_unsupported_ops(graph, [](std::string_view domain, std::string_view op_type, int64_t opset) {
    return ops::find_op(domain, op_type, opset) != nullptr;
  });
  if (!unsupported.empty()) {
    throw ModelError(fmt::format("{}: {}", model.string(), describe_unsupported_ops(unsupported)));
  }
  auto impl = std::make_unique<Impl>(std::move(graph), options);
  for (const auto& name : impl->graph.inputs) {
    const ValueInfo* info = impl->graph.find_value(name);
    TensorSpec spec{name, DType::f32, {}};
    if (info && info->dtype) spec.dtype = *info->dtype;
    if (info && info->shape) spec.shape = *info->shape;
    impl->input_specs.push_back(spec);
  }
  for (const auto& name : impl->graph.outputs) {
    const ValueInfo* info = impl->graph.find_value(name);
    TensorSpec spec{name, DType::f32, {}};
    if (info && info->dtype) spec.dtype = *info->dtype;
    if (info && info->shape) spec.shape = *info->shape;
    impl->output_specs.push_back(spec);
  }
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorSpec>& Session::inputs() const { return impl_->input_specs; }
const std::vector<TensorSpec>& Session::outputs() const { return impl_->output_specs; }
std::string Session::adapter_name() const { return impl_->context.adapter_description().name; }
const RunStats& Session::last_run() const { return impl_->stats; }
void Session::set_profiling(bool on) { impl_->set_profiling(on); }

std::map<std::string, HostTensor> Session::run(const std::map<std::string, HostTensor>& inputs) {
  if (!impl_->pending.empty()) throw std::logic_error("Session::run while submitted runs wait to be collected");
  impl_->submit(inputs);
  return impl_->collect();
}

void Session::submit(const std::map<std::string, HostTensor>& inputs) { impl_->submit(inputs); }

std::map<std::string, HostTensor> Session::collect() {
  if (impl_->pending.empty()) throw std::logic_error("Session::collect without a submitted run");
  return impl_->collect();
}

size_t Session::runs_in_flight() const { return impl_->pending.size(); }

void Session::Impl::submit(const std::map<std::string, HostTensor>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& spec : input_specs) {
    auto it = inputs.find(spec.name);
    if (it == inputs.end()) throw ModelError(fmt::format("missing input '{}'", spec.name));
    const HostTensor& t = it->second;
    if (t.dtype() != spec.dtype) {
      throw ModelError(fmt::format("input '{}' must be {}, got {}", spec.name, dtype_name(spec.dtype), dtype_name(t.dtype())));
    }
    bool shape_ok = spec.shape.empty() || spec.shape.size() == t.shape().size();
    for (size_t d = 0; shape_ok && d < spec.shape.size(); ++d) shape_ok = spec.shape[d] < 0 || spec.shape[d] == t.shape()[d];
    if (!shape_ok) {
      throw ModelError(fmt::format("input '{}' must have shape {} (negative: any), got {}", spec.name,
                                   shape_to_string(spec.shape), shape_to_string(t.shape())));
    }
  }
  for (const auto& [name, tensor] : inputs) {
    bool known = false;
    for (const auto& spec : input_specs) known = known || spec.name == name;
    if (!known) throw ModelError(fmt::format("'{}' is not an input of the model", name));
  }
  std::map<std::string, Shape> shapes;
  for (const auto& [name, tensor] : inputs) shapes[name] = tensor.shape();
  if (CapturedRun* capture = find_capture(inputs, shapes)) {
    replay(*capture, inputs, start);
    return;
  }

  std::unordered_map<std::string, ops::Value> values;
  for (const auto& spec : input_specs) {
    const HostTensor& t = inputs.at(spec.name);
    ops::Value v;
    // Small int32/int64 inputs (shapes, axes, indices) stay known on the host, like initializers:
    // shape arithmetic can read them; a kernel that needs them uploads them.
    // Tiny float inputs (Resize scales, Pad values) are known on both sides: ops that need a
    // constant read the host copy, kernels use the device copy.
    const bool index_like = t.dtype() == DType::i32 || t.dtype() == DType::i64;
    if (index_like && t.numel() <= kMaxHostElements) {
      v.host = t;
    } else {
      v.device = upload(t);
      if (t.numel() <= kTinyInput) v.host = t;
    }
    values[spec.name] = v;
  }
  if (!plan || shapes != plan_shapes) {
    // Prepacked weights and cached constants of the old plan may still be read by submitted runs.
    if (!pending.empty()) context.finish();
    captured.clear();
    plan_runs = 0;
    Graph simplified = graph;
    simplify_graph(simplified, shapes);
    fuse_conv_activations(simplified);
    fuse_group_norms(simplified);
    fuse_attention(simplified);
    plan = runtime::make_walk_plan(std::move(simplified));
    plan_shapes = shapes;
    node_states.clear();
    uploaded_constants.clear();
    constant_host_results.clear();
  }
  const Graph& graph = plan->graph;

  pool.reset_peak();  // the inputs uploaded above are on loan: they count
  const uint64_t allocations_before = pool.stats().allocations;
  // Profiling gives each dispatch its own timestamped pass: timed runs leave it off.
  gpu::Profiler* const active_profiler = profiling ? profiler.get() : nullptr;
  auto recorder_owner = std::make_unique<gpu::CommandRecorder>(context, active_profiler);
  gpu::CommandRecorder& recorder = *recorder_owner;
  // The plan's second run is captured (its first prepacks weights and uploads constants, once);
  // with control flow, later runs with other host input values too (kept if they planned nothing).
  std::unique_ptr<CapturedRun> capture;
  const bool may_capture_more = captured.size() < kMaxCapturesPerPlan && !plan->subplans.empty();
  if (replay_enabled && !active_profiler && plan_runs >= 1 && (captured.empty() || may_capture_more)) {
    capture = std::make_unique<CapturedRun>();
    for (const auto& spec : input_specs) {
      const ops::Value& v = values.at(spec.name);
      if (v.device.defined()) {
        capture->device_inputs[spec.name] = {v.device.buffer(), v.device.byte_offset(), v.device.dtype(), v.device.numel()};
      }
      if (v.host.defined()) capture->host_inputs[spec.name] = inputs.at(spec.name);
    }
    recorder.set_tape(&capture->tape);
  }
  ++plan_runs;
  ops::OpContext op_context{{context, pipelines}, recorder, pool, persistent_pool, 0, nullptr};
  op_context.weights_pool = &weights_pool;
  // Uploads while recording go through the recorder, in order with the dispatches (see
  // CommandRecorder::upload): a pooled buffer may be reused within the run.
  auto upload_in_run = [&](const HostTensor& host) {
    return Tensor::upload(recorder, pool, host.dtype(), host.shape(), host.data());
  };
  op_context.to_device = [&](const ops::Value& v) -> Tensor {
    if (v.device.defined()) return v.device;
    if (!v.host.defined()) throw ModelError("internal: undefined value used");
    if (v.constant && v.host.numel() > 0) {
      auto cached = uploaded_constants.find(v.host.data());
      if (cached == uploaded_constants.end() || cached->second.dtype() != v.host.dtype() ||
          cached->second.shape() != v.host.shape()) {
        Tensor t = Tensor::upload(context, persistent_pool, v.host.dtype(), v.host.shape(), v.host.data());
        cached = uploaded_constants.insert_or_assign(v.host.data(), std::move(t)).first;
      }
      return cached->second;
    }
    return upload_in_run(v.host);
  };

  std::map<std::string, double> record_by_op;
  // Chunked submits overlap recording with GPU work; queue order keeps pooled buffers reused across
  // chunks correct. Profiled runs submit once (their timestamps are resolved per command buffer).
  runtime::GraphWalk walk({context, recorder, op_context, weights_pool, uploaded, node_states,
                           constant_host_results, record_by_op, active_profiler != nullptr,
                           active_profiler ? 0 : first_submit_dispatches, first_submit_dispatches});
  runtime::Scope scope{&graph, nullptr, std::move(values)};
  walk.walk(*plan, scope);
  recorder.set_tape(nullptr);  // the output readbacks are each run's own
  // A run that read a condition back or planned a subgraph is no replay of later runs.
  if (walk.read_back() || walk.plans_made() > 0) capture.reset();
  PendingRun run;
  run.start = start;
  RunStats& stats = run.stats;
  stats.record_ms = ms_since(start);
  stats.record_ms_by_op = std::move(record_by_op);
  stats.dispatches = recorder.dispatch_count();
  stats.peak_activation_bytes = pool.stats().peak_bytes_in_use;
  stats.weight_bytes = weights_pool.stats().bytes_in_use + persistent_pool.stats().bytes_in_use;
  stats.peak_gpu_bytes = stats.peak_activation_bytes + stats.weight_bytes;
  stats.buffers_allocated = pool.stats().allocations - allocations_before;
  for (const auto& name : graph.outputs) {
    ops::Value v = walk.lookup(scope, graph.nodes.empty() ? Node{} : graph.nodes.back(), name);
    if (!v.defined() || v.is_sequence())
      throw ModelError(fmt::format("graph output '{}' is {}: onda returns only tensors", name,
                                   v.defined() ? "a sequence" : "an empty optional"));
    PendingRun::Output out;
    out.name = name;
    if (v.on_host()) {
      out.host = v.host;
    } else {
      out.device = v.device;
      out.download = v.device.begin_download(context, recorder);
    }
    run.outputs.push_back(std::move(out));
  }
  if (context.guards().any()) run.guards = context.guards().begin_check(recorder);
  run.submitted = std::chrono::steady_clock::now();
  if (active_profiler) {
    // Profiled runs complete here: their timestamps are read back with the wait.
    recorder.submit_and_wait();
    for (const auto& e : profiler->entries()) {
      const size_t tab = e.name.find('\t');
      const size_t tab2 = tab == std::string::npos ? tab : e.name.find('\t', tab + 1);
      ProfileLine line{tab == std::string::npos ? e.name : e.name.substr(0, tab),
                       tab == std::string::npos ? "" : e.name.substr(tab + 1, tab2 - tab - 1), e.total_ms, e.count, {}};
      if (tab2 != std::string::npos) line.input_shapes = e.name.substr(tab2 + 1);
      stats.profile.push_back(std::move(line));
    }
    stats.profile_span_ms = profiler->span_ms();
    profiler->clear();
  } else {
    recorder.submit();
  }
  stats.submits = recorder.submit_count();
  if (capture) {
    for (const auto& out : run.outputs) capture->outputs.push_back({out.name, out.host, out.device, {}});
    capture->stats = stats;
    capture->stats.profile.clear();
    // The values released during the run sit in the pools' free lists now: the tape keeps them.
    std::vector<wgpu::Buffer> buffers = capture->tape.buffers();
    for (const auto& [name, slot] : capture->device_inputs) buffers.push_back(slot.buffer);
    for (gpu::BufferPool* p : {&pool, &persistent_pool, &weights_pool}) {
      for (auto& loan : p->claim(buffers)) capture->claimed.push_back(std::move(loan));
    }
    captured.push_back(std::move(capture));
  }
  run.recorder = std::move(recorder_owner);
  pending.push_back(std::move(run));
}

Session::Impl::CapturedRun* Session::Impl::find_capture(const std::map<std::string, HostTensor>& inputs,
                                                        const std::map<std::string, Shape>& shapes) const {
  if (profiling || !plan || shapes != plan_shapes) return nullptr;
  for (const auto& capture : captured) {
    bool same = true;
    for (const auto& [name, host] : capture->host_inputs) {
      const HostTensor& now = inputs.at(name);
      same = same && now.byte_size() == host.byte_size() &&
             std::memcmp(now.data(), host.data(), host.byte_size()) == 0;
    }
    if (same) return capture.get();
  }
  return nullptr;
}

void Session::Impl::replay(CapturedRun& capture, const std::map<std::string, HostTensor>& inputs,
                           std::chrono::steady_clock::time_point start) {
  // Queue writes: after the work submitted so far (which may still read the old inputs), before the
  // replay's first submit.
  for (const auto& [name, slot] : capture.device_inputs) {
    const std::vector<uint8_t> bytes = Tensor::to_device_layout(slot.dtype, slot.numel, inputs.at(name).data());
    gpu::upload(context, slot.buffer, slot.offset, bytes.data(), bytes.size());
  }
  auto recorder_owner = std::make_unique<gpu::CommandRecorder>(context);
  gpu::CommandRecorder& recorder = *recorder_owner;
  capture.tape.replay(recorder);
  PendingRun run;
  run.start = start;
  run.stats = capture.stats;
  run.stats.record_ms = ms_since(start);
  run.stats.record_ms_by_op = {{"(replay)", run.stats.record_ms}};
  run.stats.buffers_allocated = 0;
  for (const auto& out : capture.outputs) {
    PendingRun::Output o{out.name, out.host, out.device, {}};
    if (!o.host.defined()) o.download = o.device.begin_download(context, recorder);
    run.outputs.push_back(std::move(o));
  }
  if (context.guards().any()) run.guards = context.guards().begin_check(recorder);
  run.submitted = std::chrono::steady_clock::now();
  recorder.submit();
  run.stats.submits = recorder.submit_count();
  run.recorder = std::move(recorder_owner);
  ++plan_runs;
  pending.push_back(std::move(run));
}

std::map<std::string, HostTensor> Session::Impl::collect() {
  PendingRun run = std::move(pending.front());
  pending.pop_front();
  std::map<std::string, HostTensor> outputs;
  for (auto& out : run.outputs) {
    if (out.host.defined()) {
      outputs[out.name] = out.host;
    } else {
      const std::vector<uint8_t> bytes = out.device.host_bytes_from_device(out.download.finish(context));
      outputs[out.name] = HostTensor::copy_of(out.device.dtype(), out.device.shape(), bytes.data(), bytes.size());
    }
  }
  context.check_errors();
  // The readbacks were the run's last commands: everything it retained is free now.
  run.recorder->release_in_flight();
  if (run.guards) context.guards().finish_check(run.guards->finish(context));
  run.stats.gpu_wait_ms = ms_since(run.submitted);
  run.stats.wall_ms = ms_since(run.start);
  stats = std::move(run.stats);
  return outputs;
}

}  // namespace onda
