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
// activation peak. Its tensors follow a static memory plan per input shape (graph/memory_plan.h,
// runtime/memory_planning.h): the plan's first run is traced (sizes, lifetimes, which loans each node
// uses together), the plan places every allocation at an offset in a few arenas, and later runs
// (and the captured run, so its replays) take their tensors from there; SessionOptions::memory_limit
// is checked against the graph's dry-run plan before the first run and the traced plan after it.
// `weights_pool` holds initializers uploaded once and what ops derive from them (prepacked B);
// `persistent_pool` holds per-node tables (FFT twiddles, RNN weights) kept across runs.
#include "onda/session.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <optional>
#include <set>
#include <unordered_map>

#include "gpu/buffer_pool.h"
#include "gpu/command_recorder.h"
#include "gpu/command_tape.h"
#include "gpu/context.h"
#include "gpu/environment.h"
#include "gpu/flush_before_trim.h"
#include "gpu/gpu_error.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "gpu/run_guards.h"
#include "gpu/transfer.h"
#include "graph/fusion_passes.h"
#include "graph/host_ops.h"
#include "graph/liveness.h"
#include "graph/model_error.h"
#include "graph/op_coverage.h"
#include "graph/simplify.h"
#include "kernels/kernel_tuning.h"
#include "onnx/onnx_loader.h"
#include "ops/op_registry.h"
#include "runtime/control_flow.h"
#include "runtime/device_impl.h"
#include "runtime/graph_walk.h"
#include "runtime/memory_planning.h"
#include "runtime/model_pipeline_manifest.h"
#include "runtime/roofline.h"
#include "runtime/weight_prefault.h"

namespace onda {
namespace {

// SessionOptions::tuning's "family.field=value" assignments over the defaults.
kernels::KernelTuning parse_tuning(const std::vector<std::string>& assignments) {
  kernels::KernelTuning tuning = kernels::default_kernel_tuning();
  for (const std::string& assignment : assignments) {
    try {
      kernels::set_tuning(tuning, assignment);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("SessionOptions::tuning: {}", e.what()));
    }
  }
  return tuning;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// TensorSpec::dim_names: the symbolic names the model gives its unknown dimensions.
std::vector<std::string> dim_names_of(const ValueInfo* info, size_t rank) {
  std::vector<std::string> names(rank);
  if (info && info->dim_params.size() == rank) {
    for (size_t i = 0; i < rank; ++i)
      if ((*info->shape)[i] < 0) names[i] = info->dim_params[i];
  }
  return names;
}

using runtime::kMaxHostElements;
// Constants from this size on go up through the upload ring (Tensor::upload_staged); smaller ones by a
// queue write, whose own staging serves small writes well and costs no submit of its own.
constexpr uint64_t kStagedConstantBytes = uint64_t{1} << 20;
// Inputs up to this many elements also keep a host copy.
constexpr int64_t kTinyInput = 64;
// Captured runs kept per plan when its control flow can take different paths (see the top).
constexpr size_t kMaxCapturesPerPlan = 4;
// Runs traced for one plan's memory plan before the pool allocates without one (a run whose
// allocations differ from the traced run's, e.g. the first run's prepacking scratch, is traced again).
constexpr int kMemoryPlanAttempts = 3;

}  // namespace

struct Session::Impl {
  Graph graph;
  std::vector<TensorSpec> input_specs, output_specs;
  // Shared with other sessions (device.h); everything below releases its GPU objects before it.
  std::shared_ptr<Device> device;
  gpu::Context& context;
  gpu::BufferPool pool{context};
  gpu::BufferPool persistent_pool{context};
  gpu::BufferPool weights_pool{context};
  gpu::PipelineCache pipelines{context};
  // The pipelines this model's runs used, kept across processes (SessionOptions::pipeline_manifest).
  std::optional<runtime::ModelPipelineManifest> manifest;
  std::unique_ptr<gpu::Profiler> profiler;
  // Initializers uploaded once, on first GPU use.
  std::unordered_map<std::string, Tensor> uploaded;
  bool weights_uploaded = false;  // the first walk's one pass over them (GraphWalk::upload_weights)
  // The loaded graph's weights (runtime::weights_read): uploaded while the first plan is made.
  std::vector<std::string> first_weights;
  // The first plan's time on its own thread and the weights' upload beside it, for the first run's
  // RunStats (each, not their sum, is what the run waited for at most).
  double first_plan_ms = 0, first_weights_ms = 0;
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
  const kernels::KernelTuning tuning;  // every kernel family's (SessionOptions::tuning)

  Impl(Graph g, const SessionOptions& options, std::shared_ptr<Device> d)
      : graph(std::move(g)),
        device(std::move(d)),
        context(device->impl().context),
        first_submit_dispatches(options.first_submit_dispatches),
        tuning(parse_tuning(options.tuning)),
        memory_limit(options.memory_limit) {
    // First: the manifest's pipelines are made on worker threads while the rest of the session
    // (the profiler's probe, then the first run's plan and weights) goes on here.
    if (options.pipeline_manifest) {
      manifest.emplace(context, graph, options.tuning);
      manifest->start(pipelines);
    }
    set_profiling(options.profile);
  }

  static std::unique_ptr<Session> open(Graph graph, const std::string& what, const SessionOptions& options,
                                       std::shared_ptr<Device> device);

  void set_profiling(bool on) {
    profiling = on;
    if (on && !profiler) profiler = std::make_unique<gpu::Profiler>(context);
    if (on) kernels::device_peak({context, pipelines});  // the roofline's peaks: probed once, at start-up
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
      Tensor kept;  // run_device: the output's copy in the Device's tensor pool
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
  int plan_runs = 0;                                   // runs recorded with the current plan
  // The static memory plan of the current plan's activations (see begin_memory_run).
  struct MemoryState {
    std::vector<runtime::StepMark> marks;  // of the traced run
    int attempts = 0;                      // runs traced for this plan
    // Off for graphs with If/Loop/Scan: their allocations follow the branch each run takes, so one
    // traced run does not foresee the next (those keep the pool's allocation).
    bool enabled = true;
    uint64_t planned_bytes = 0, live_peak_bytes = 0;
    std::unique_ptr<runtime::ActivationPlan> to_install;  // planned from the traced run
    // Without a memory_limit the plan is made on a thread of its own while the traced run completes
    // and the caller goes on; the next run takes it (adopt_plan) before it begins.
    std::future<runtime::ActivationPlan> planning;
    uint64_t traced_pool_bytes = 0;  // the pool's bytes after the traced run
  };
  MemoryState memory;
  const uint64_t memory_limit;
  // Reads the weights' pages ahead of the first run's upload (weight_prefault.h; it holds its own
  // references to them).
  std::unique_ptr<runtime::WeightPrefault> prefault;
  const bool replay_enabled = gpu::user_environment().replay;

  // The captured run these inputs can replay, or null.
  CapturedRun* find_capture(const std::map<std::string, HostTensor>& inputs,
                            const std::map<std::string, Shape>& shapes) const;
  void replay(CapturedRun& capture, const std::map<std::string, HostTensor>& inputs,
              const std::map<std::string, DeviceTensor>& device_inputs,
              const std::set<std::string>& on_device, std::chrono::steady_clock::time_point start);
  // Inputs from host and/or device memory; the outputs named in `on_device` are kept as
  // DeviceTensors instead of being read back (collect_split).
  void submit(const std::map<std::string, HostTensor>& inputs,
              const std::map<std::string, DeviceTensor>& device_inputs = {},
              const std::set<std::string>& on_device = {});
  std::set<std::string> all_output_names() const {
    std::set<std::string> names;
    for (const auto& spec : output_specs) names.insert(spec.name);
    return names;
  }
  void check_inputs(const std::map<std::string, HostTensor>& inputs,
                    const std::map<std::string, DeviceTensor>& device_inputs) const;
  // submit's steps, in order: shapes, plan, memory, bind, capture, record, outputs, profile.
  std::map<std::string, Shape> input_shapes(const std::map<std::string, HostTensor>& inputs,
                                            const std::map<std::string, DeviceTensor>& device_inputs,
                                            uint64_t& host_upload_bytes) const;
  Graph simplified_for(const std::map<std::string, Shape>& shapes) const;
  // The walk plan of these input shapes: CPU work only, touching nothing but the loaded graph.
  runtime::WalkPlan make_plan(const std::map<std::string, Shape>& shapes) const;
  // The first plan, made on a thread of its own while this one uploads the loaded graph's weights.
  runtime::WalkPlan plan_while_uploading_weights(const std::map<std::string, Shape>& shapes);
  // Buffers created so far for what is held across runs (weights, prepacked weights, tables).
  uint64_t held_buffers_created() const {
    return persistent_pool.stats().allocations + weights_pool.stats().allocations;
  }
  // CPU time the three pools have spent in createBuffer so far.
  double buffer_create_ms() const {
    return pool.stats().create_ms + persistent_pool.stats().create_ms + weights_pool.stats().create_ms;
  }
  // True when it made a new plan (the input shapes changed).
  bool ensure_plan(const std::map<std::string, Shape>& shapes);
  void begin_memory_run();
  // False when this run's buffers are not the memory plan's (traced, or it missed the plan).
  bool finish_memory_run();
  bool adopt_plan(runtime::ActivationPlan planned, uint64_t pool_bytes);
  std::unordered_map<std::string, ops::Value> bind_inputs(
      const std::map<std::string, HostTensor>& inputs,
      const std::map<std::string, DeviceTensor>& device_inputs,
      std::vector<std::pair<const Tensor*, Tensor>>& device_input_copies);
  std::unique_ptr<CapturedRun> begin_capture(const std::map<std::string, HostTensor>& inputs,
                                             const std::unordered_map<std::string, ops::Value>& values,
                                             gpu::CommandRecorder& recorder, bool profiled);
  // A recorded walk and what it borrows (kept until the outputs are recorded).
  struct Recorded {
    std::unique_ptr<ops::OpContext> op_context;
    std::unique_ptr<std::map<std::string, double>> record_by_op;
    std::unique_ptr<std::map<std::string, double>> slow_nodes;
    std::unique_ptr<runtime::GraphWalk> walk;
    std::unique_ptr<runtime::Scope> scope;
  };
  Recorded record_walk(std::unordered_map<std::string, ops::Value> values, gpu::CommandRecorder& recorder,
                       gpu::Profiler* active_profiler, std::map<std::string, NodeCost>& profile_costs);
  std::vector<PendingRun::Output> record_outputs(runtime::GraphWalk& walk, const runtime::Scope& scope,
                                                 gpu::CommandRecorder& recorder,
                                                 const std::set<std::string>& on_device);
  void read_profile(RunStats& stats, const std::map<std::string, NodeCost>& profile_costs);
  void keep_capture(std::unique_ptr<CapturedRun> capture, const PendingRun& run);
  Tensor keep_on_device(const ops::Value& value, gpu::CommandRecorder& recorder);
  std::map<std::string, HostTensor> collect();
  RunOutputs collect_split();
  void finish_collect(PendingRun& run);
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() {
  const std::shared_ptr<Device> device = impl_->device;  // outlives the lock
  DeviceLock lock(device->impl().mutex);
  impl_.reset();
}

std::unique_ptr<Session> Session::open(const std::filesystem::path& model, const SessionOptions& options,
                                       std::shared_ptr<Device> device) {
  return Impl::open(load_onnx_model(model), model.string(), options, std::move(device));
}

std::unique_ptr<Session> Session::open_bytes(std::span<const std::byte> model, const SessionOptions& options,
                                             std::shared_ptr<Device> device, ExternalDataResolver resolver) {
  OnnxLoadOptions load_options;
  load_options.external_data_resolver = std::move(resolver);
  const std::string_view bytes(reinterpret_cast<const char*>(model.data()), model.size());
  return Impl::open(parse_onnx_model(bytes, {}, "model in memory", load_options), "model in memory", options,
                    std::move(device));
}

std::unique_ptr<Session> Session::Impl::open(Graph graph, const std::string& what,
                                             const SessionOptions& options, std::shared_ptr<Device> device) {
  auto unsupported =
      find_unsupported_ops(graph, [](std::string_view domain, std::string_view op_type, int64_t opset) {
        return ops::find_op(domain, op_type, opset) != nullptr;
      });
  if (!unsupported.empty()) {
    throw ModelError(fmt::format("{}: {}", what, describe_unsupported_ops(unsupported)));
  }
  if (!device) {
    DeviceOptions device_options;
    device_options.adapter = options.adapter;
    device_options.max_storage_binding_bytes = options.max_storage_binding_bytes;
    device = Device::open(device_options);
  }
  DeviceLock lock(device->impl().mutex);
  auto impl = std::make_unique<Impl>(std::move(graph), options, device);
  for (const auto& name : impl->graph.inputs) {
    const ValueInfo* info = impl->graph.find_value(name);
    TensorSpec spec{name, DType::f32, {}, {}};
    if (info && info->dtype) spec.dtype = *info->dtype;
    if (info && info->shape) spec.shape = *info->shape;
    spec.dim_names = dim_names_of(info, spec.shape.size());
    impl->input_specs.push_back(spec);
  }
  for (const auto& name : impl->graph.outputs) {
    const ValueInfo* info = impl->graph.find_value(name);
    TensorSpec spec{name, DType::f32, {}, {}};
    if (info && info->dtype) spec.dtype = *info->dtype;
    if (info && info->shape) spec.shape = *info->shape;
    spec.dim_names = dim_names_of(info, spec.shape.size());
    impl->output_specs.push_back(spec);
  }
  // The weights the first run uploads, in the order it uploads them: their pages are read ahead
  // from here on, and the first plan is made while they go up (plan_while_uploading_weights).
  impl->first_weights = runtime::weights_read(impl->graph);
  std::vector<HostTensor> weights;
  for (const std::string& name : impl->first_weights) weights.push_back(*impl->graph.find_initializer(name));
  impl->prefault = std::make_unique<runtime::WeightPrefault>(std::move(weights));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const std::vector<TensorSpec>& Session::inputs() const {
  return impl_->input_specs;
}
const std::vector<TensorSpec>& Session::outputs() const {
  return impl_->output_specs;
}
const std::shared_ptr<Device>& Session::device() const {
  return impl_->device;
}
std::string Session::adapter_name() const {
  return impl_->context.adapter_description().name;
}
const RunStats& Session::last_run() const {
  return impl_->stats;
}
void Session::set_profiling(bool on) {
  DeviceLock lock(impl_->device->impl().mutex);
  impl_->set_profiling(on);
}

MemoryPlanReport Session::plan_memory(const std::map<std::string, std::vector<int64_t>>& input_shapes) {
  DeviceLock lock(impl_->device->impl().mutex);
  std::map<std::string, Shape> shapes(input_shapes.begin(), input_shapes.end());
  const MemoryPlanReport report =
      runtime::plan_graph_memory(impl_->simplified_for(shapes), impl_->context.limits());
  runtime::check_memory_limit(impl_->memory_limit, report.activation_bytes, report.weight_bytes,
                              report.peak_node, "the plan of these input shapes");
  return report;
}

std::map<std::string, HostTensor> Session::run(const std::map<std::string, HostTensor>& inputs) {
  return run(inputs, {});
}

std::map<std::string, HostTensor> Session::run(const std::map<std::string, HostTensor>& host_inputs,
                                               const std::map<std::string, DeviceTensor>& device_inputs) {
  DeviceLock lock(impl_->device->impl().mutex);
  if (!impl_->pending.empty())
    throw std::logic_error("Session::run while submitted runs wait to be collected");
  impl_->submit(host_inputs, device_inputs);
  return impl_->collect();
}

std::map<std::string, DeviceTensor> Session::run_device(
    const std::map<std::string, HostTensor>& host_inputs,
    const std::map<std::string, DeviceTensor>& device_inputs) {
  DeviceLock lock(impl_->device->impl().mutex);
  if (!impl_->pending.empty())
    throw std::logic_error("Session::run_device while submitted runs wait to be collected");
  impl_->submit(host_inputs, device_inputs, impl_->all_output_names());
  return impl_->collect_split().device;
}

RunOutputs Session::run_split(const std::map<std::string, HostTensor>& host_inputs,
                              const std::map<std::string, DeviceTensor>& device_inputs,
                              const std::set<std::string>& on_device) {
  DeviceLock lock(impl_->device->impl().mutex);
  if (!impl_->pending.empty())
    throw std::logic_error("Session::run_split while submitted runs wait to be collected");
  for (const auto& name : on_device) {
    bool known = false;
    for (const auto& spec : impl_->output_specs) known = known || spec.name == name;
    if (!known) throw InputError(fmt::format("'{}' is not an output of the model", name));
  }
  impl_->submit(host_inputs, device_inputs, on_device);
  return impl_->collect_split();
}

void Session::submit(const std::map<std::string, HostTensor>& inputs) {
  DeviceLock lock(impl_->device->impl().mutex);
  impl_->submit(inputs);
}

std::map<std::string, HostTensor> Session::collect() {
  DeviceLock lock(impl_->device->impl().mutex);
  if (impl_->pending.empty()) throw std::logic_error("Session::collect without a submitted run");
  return impl_->collect();
}

size_t Session::runs_in_flight() const {
  DeviceLock lock(impl_->device->impl().mutex);
  return impl_->pending.size();
}

void Session::Impl::check_inputs(const std::map<std::string, HostTensor>& inputs,
                                 const std::map<std::string, DeviceTensor>& device_inputs) const {
  for (const auto& spec : input_specs) {
    auto host = inputs.find(spec.name);
    auto on_device = device_inputs.find(spec.name);
    if (host == inputs.end() && on_device == device_inputs.end()) {
      throw InputError(fmt::format("missing input '{}'", spec.name));
    }
    if (host != inputs.end() && on_device != device_inputs.end()) {
      throw InputError(fmt::format("input '{}' given twice (host and device)", spec.name));
    }
    if (on_device != device_inputs.end()) {
      if (!on_device->second.defined())
        throw InputError(fmt::format("input '{}' is an undefined DeviceTensor", spec.name));
      if (on_device->second.device() != device) {
        throw InputError(
            fmt::format("input '{}' is a DeviceTensor of another Device than the session's", spec.name));
      }
    }
    const DType dtype = host != inputs.end() ? host->second.dtype() : on_device->second.dtype();
    const Shape& shape = host != inputs.end() ? host->second.shape() : on_device->second.shape();
    if (dtype != spec.dtype) {
      throw InputError(
          fmt::format("input '{}' must be {}, got {}", spec.name, dtype_name(spec.dtype), dtype_name(dtype)));
    }
    bool shape_ok = spec.shape.empty() || spec.shape.size() == shape.size();
    for (size_t d = 0; shape_ok && d < spec.shape.size(); ++d)
      shape_ok = spec.shape[d] < 0 || spec.shape[d] == shape[d];
    if (!shape_ok) {
      throw InputError(fmt::format("input '{}' must have shape {} (negative: any), got {}", spec.name,
                                   shape_to_string(spec.shape), shape_to_string(shape)));
    }
  }
  auto check_known = [&](const std::string& name) {
    bool known = false;
    for (const auto& spec : input_specs) known = known || spec.name == name;
    if (!known) throw InputError(fmt::format("'{}' is not an input of the model", name));
  };
  for (const auto& entry : inputs) check_known(entry.first);
  for (const auto& entry : device_inputs) check_known(entry.first);
}

// A run_device output in the Device's own pool, where no run reuses it: a GPU copy of a GPU value, an
// upload of a value known on the host (shape arithmetic).
Tensor Session::Impl::keep_on_device(const ops::Value& value, gpu::CommandRecorder& recorder) {
  gpu::BufferPool& tensors = device->impl().tensors;
  if (value.on_host()) {
    return Tensor::upload(recorder, tensors, value.host.dtype(), value.host.shape(), value.host.data());
  }
  const Tensor& source = value.device;
  Tensor kept = Tensor::empty(tensors, source.dtype(), source.shape());
  // copyBufferToBuffer moves whole 4-byte words; pooled buffers are padded to their size class.
  const uint64_t bytes = (source.device_bytes() + 3) / 4 * 4;
  if (source.byte_offset() % 4 != 0 || source.byte_offset() + bytes > source.storage()->end()) {
    throw ModelError("internal: an output view at an unaligned offset cannot stay on the device");
  }
  if (bytes > 0)
    recorder.copy(source.buffer(), source.byte_offset(), kept.buffer(), kept.byte_offset(), bytes);
  return kept;
}

void Session::Impl::submit(const std::map<std::string, HostTensor>& inputs,
                           const std::map<std::string, DeviceTensor>& device_inputs,
                           const std::set<std::string>& on_device) {
  const auto start = std::chrono::steady_clock::now();
  check_inputs(inputs, device_inputs);
  uint64_t host_upload_bytes = 0;
  const std::map<std::string, Shape> shapes = input_shapes(inputs, device_inputs, host_upload_bytes);
  if (CapturedRun* capture = find_capture(inputs, shapes)) {
    replay(*capture, inputs, device_inputs, on_device, start);
    return;
  }
  // From here on, with the weights' first upload (ensure_plan) and a new memory plan's arenas.
  const uint64_t held_allocations_before = held_buffers_created();
  const double create_ms_before = buffer_create_ms();
  const auto plan_start = std::chrono::steady_clock::now();
  const bool new_plan = ensure_plan(shapes);
  const double plan_ms = ms_since(plan_start);
  const gpu::PipelineCreationStats pipelines_before = pipelines.stats();
  const uint64_t bind_groups_before = context.bind_groups().misses();
  const double bind_group_ms_before = context.bind_groups().create_ms();
  const gpu::DiskBlobCache* const blob_cache = context.pipeline_blob_cache();
  const uint64_t blob_loads_before = blob_cache ? blob_cache->loads() : 0;
  const uint64_t blob_stores_before = blob_cache ? blob_cache->stores() : 0;
  begin_memory_run();
  std::vector<std::pair<const Tensor*, Tensor>> device_input_copies;
  std::unordered_map<std::string, ops::Value> values =
      bind_inputs(inputs, device_inputs, device_input_copies);
  pool.reset_peak();  // the inputs uploaded above are on loan: they count
  const uint64_t allocations_before = pool.stats().allocations;  // buffers the run itself creates

  // Profiling gives each dispatch its own timestamped pass: timed runs leave it off.
  gpu::Profiler* const active_profiler = profiling ? profiler.get() : nullptr;
  auto recorder_owner = std::make_unique<gpu::CommandRecorder>(context, active_profiler);
  gpu::CommandRecorder& recorder = *recorder_owner;
  const gpu::FlushBeforeTrim flush_before_trim{{&pool, &persistent_pool, &weights_pool}, recorder};
  for (const auto& [source, copy] : device_input_copies) {
    if (copy.device_bytes() > 0) {
      recorder.copy(source->buffer(), source->byte_offset(), copy.buffer(), copy.byte_offset(),
                    (copy.device_bytes() + 3) / 4 * 4);
    }
  }
  std::unique_ptr<CapturedRun> capture = begin_capture(inputs, values, recorder, active_profiler != nullptr);
  ++plan_runs;

  PendingRun run;
  run.start = start;
  std::map<std::string, NodeCost> profile_costs;  // by profile name (runtime/roofline.h)
  const Recorded recorded = record_walk(std::move(values), recorder, active_profiler, profile_costs);
  recorder.set_tape(nullptr);  // the output readbacks are each run's own
  // A run that read a condition back, planned a subgraph or drew unseeded random numbers is no
  // replay of later runs; nor one that dropped weight uploads it read (freed once it is submitted).
  if (recorded.walk->read_back() || recorded.walk->plans_made() > 0 || recorded.op_context->differs_per_run ||
      recorded.walk->released_uploads())
    capture.reset();
  RunStats& stats = run.stats;
  stats.record_ms = ms_since(start);
  stats.record_ms_by_op = std::move(*recorded.record_by_op);
  if (new_plan && first_plan_ms > 0) {  // the first plan, beside the weights' upload
    stats.record_ms_by_op["(graph plan)"] += first_plan_ms;
    stats.record_ms_by_op["(weights)"] += first_weights_ms;
    first_plan_ms = 0;
  } else if (new_plan) {
    stats.record_ms_by_op["(graph plan)"] += plan_ms;
  }
  stats.slow_node_record_ms = std::move(*recorded.slow_nodes);
  const gpu::PipelineCreationStats& pipelines_after = pipelines.stats();
  stats.pipelines_created = pipelines_after.pipelines - pipelines_before.pipelines;
  stats.wgsl_render_ms = pipelines_after.render_ms - pipelines_before.render_ms;
  stats.shader_module_ms = pipelines_after.module_ms - pipelines_before.module_ms;
  stats.pipeline_create_ms = pipelines_after.pipeline_ms - pipelines_before.pipeline_ms;
  stats.bind_groups_created = context.bind_groups().misses() - bind_groups_before;
  stats.bind_group_create_ms = context.bind_groups().create_ms() - bind_group_ms_before;
  stats.pipeline_cache_loads = blob_cache ? blob_cache->loads() - blob_loads_before : 0;
  stats.pipeline_cache_stores = blob_cache ? blob_cache->stores() - blob_stores_before : 0;
  stats.pipelines_prefetched = pipelines_after.prefetched - pipelines_before.prefetched;
  stats.pipeline_prefetch_wait_ms = pipelines_after.prefetch_wait_ms - pipelines_before.prefetch_wait_ms;
  stats.dispatches = recorder.dispatch_count();
  stats.buffers_allocated = pool.stats().allocations - allocations_before;
  stats.held_buffers_allocated = held_buffers_created() - held_allocations_before;
  stats.buffer_create_ms = buffer_create_ms() - create_ms_before;
  stats.host_upload_bytes = host_upload_bytes;
  run.outputs = record_outputs(*recorded.walk, *recorded.scope, recorder, on_device);
  stats.peak_activation_bytes = pool.stats().peak_bytes_in_use;
  stats.weight_bytes = weights_pool.stats().bytes_in_use + persistent_pool.stats().bytes_in_use;
  stats.peak_gpu_bytes = stats.peak_activation_bytes + stats.weight_bytes;
  if (context.guards().any()) run.guards = context.guards().begin_check(recorder);
  run.submitted = std::chrono::steady_clock::now();
  if (active_profiler) {
    recorder.submit_and_wait();  // profiled runs complete here: their timestamps are read with the wait
    read_profile(stats, profile_costs);
  } else {
    recorder.submit();
  }
  // A traced run's memory plan is made once the run is submitted (finish_memory_run), not before.
  if (!finish_memory_run()) capture.reset();  // a run that missed the plan is no replay of later runs
  stats.planned_activation_bytes = memory.planned_bytes;
  stats.live_activation_bytes = memory.live_peak_bytes;
  // Uploads that only prepacked forms needed went back to the weights pool during the walk: free
  // them now that the work reading them is submitted (WebGPU frees them once it completes).
  if (recorded.walk->released_uploads()) weights_pool.trim();
  stats.submits = recorder.submit_count();
  // While the GPU runs: a run that created pipelines the manifest lacks updates it.
  if (manifest && stats.pipelines_created > stats.pipelines_prefetched) {
    if (const double ms = manifest->save(pipelines); ms > 0)
      stats.record_ms_by_op["(pipeline manifest)"] += ms;
  }
  if (capture) keep_capture(std::move(capture), run);
  run.recorder = std::move(recorder_owner);
  pending.push_back(std::move(run));
}

std::map<std::string, Shape> Session::Impl::input_shapes(
    const std::map<std::string, HostTensor>& inputs, const std::map<std::string, DeviceTensor>& device_inputs,
    uint64_t& host_upload_bytes) const {
  std::map<std::string, Shape> shapes;
  for (const auto& [name, tensor] : inputs) {
    shapes[name] = tensor.shape();
    host_upload_bytes += tensor.byte_size();
  }
  for (const auto& [name, tensor] : device_inputs) shapes[name] = tensor.shape();
  return shapes;
}

Graph Session::Impl::simplified_for(const std::map<std::string, Shape>& shapes) const {
  Graph simplified = graph;
  simplify_graph(simplified, shapes);
  run_fusion_passes(simplified);
  return simplified;
}

runtime::WalkPlan Session::Impl::make_plan(const std::map<std::string, Shape>& shapes) const {
  Graph simplified = simplified_for(shapes);
  if (memory_limit > 0) {
    // The dry run's plan (values only) fails early, before anything of this shape is allocated.
    const MemoryPlanReport estimate = runtime::plan_graph_memory(simplified, context.limits());
    runtime::check_memory_limit(memory_limit, estimate.activation_bytes, estimate.weight_bytes,
                                estimate.peak_node, "the plan of this input shape");
  }
  return runtime::make_walk_plan(std::move(simplified));
}

// The graph plan (simplification, fusion: all CPU) and the weights' upload (host copies into the
// upload ring) took about the same time in first runs (HTDemucs on an H100: 41 and 47-70 ms), one
// after the other; here they overlap. Weights go up by the loaded graph's names; the plan keeps an
// initializer under its name with the same data or drops it (folded away, dead), so an upload it does
// not read is released, and upload_weights adds the plan's own (fused scale / bias tensors).
runtime::WalkPlan Session::Impl::plan_while_uploading_weights(const std::map<std::string, Shape>& shapes) {
  std::future<std::pair<runtime::WalkPlan, double>> planning = std::async(std::launch::async, [this, &shapes] {
    const auto start = std::chrono::steady_clock::now();
    runtime::WalkPlan made = make_plan(shapes);
    return std::make_pair(std::move(made), ms_since(start));
  });
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& name : first_weights) {
    if (uploaded.count(name)) continue;
    const HostTensor& init = *graph.find_initializer(name);
    uploaded.emplace(name, Tensor::upload_once(context, weights_pool, init.dtype(), init.shape(), init.data()));
  }
  context.upload_ring().flush(context);
  first_weights_ms = ms_since(start);
  auto [made, plan_ms] = planning.get();
  first_plan_ms = plan_ms;
  bool released = false;
  for (const std::string& name : first_weights) {
    const HostTensor* kept = made.graph.find_initializer(name);
    if (kept && kept->data() == graph.find_initializer(name)->data()) continue;
    released = uploaded.erase(name) > 0 || released;
  }
  if (released) weights_pool.trim();
  return made;
}

bool Session::Impl::ensure_plan(const std::map<std::string, Shape>& shapes) {
  if (plan && shapes == plan_shapes) return false;
  // Prepacked weights and cached constants of the old plan may still be read by submitted runs.
  if (!pending.empty()) context.finish();
  captured.clear();
  plan_runs = 0;
  // Under a memory limit the plan comes first: one that does not fit fails before the weights go up.
  plan = weights_uploaded || memory_limit > 0 ? make_plan(shapes) : plan_while_uploading_weights(shapes);
  plan_shapes = shapes;
  node_states.clear();
  uploaded_constants.clear();
  constant_host_results.clear();
  pool.drop_plan();
  memory = {};
  for (const Node& node : plan->graph.nodes)
    memory.enabled = memory.enabled && !runtime::is_control_flow_op(node);
  return true;
}

// Inputs from the host are uploaded into this run's pool; device inputs get a buffer there too and
// are copied on the GPU (recorded first, by the caller): the run may release and reuse that buffer
// like any input's, and the caller's tensor stays unchanged.
std::unordered_map<std::string, ops::Value> Session::Impl::bind_inputs(
    const std::map<std::string, HostTensor>& inputs, const std::map<std::string, DeviceTensor>& device_inputs,
    std::vector<std::pair<const Tensor*, Tensor>>& device_input_copies) {
  std::unordered_map<std::string, ops::Value> values;
  for (const auto& spec : input_specs) {
    ops::Value v;
    if (auto on_device = device_inputs.find(spec.name); on_device != device_inputs.end()) {
      const Tensor& source = on_device->second.impl().tensor;
      v.device = Tensor::empty(pool, source.dtype(), source.shape());
      device_input_copies.emplace_back(&source, v.device);
      values[spec.name] = v;
      continue;
    }
    const HostTensor& t = inputs.at(spec.name);
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
  return values;
}

// The plan's second run is captured (its first prepacks weights and uploads constants, once, and is
// traced for the memory plan); with control flow, later runs with other host input values too (kept
// if they planned nothing). A run traced for the memory plan is not captured: its buffers are the
// pool's, the next run's are the plan's.
std::unique_ptr<Session::Impl::CapturedRun> Session::Impl::begin_capture(
    const std::map<std::string, HostTensor>& inputs,
    const std::unordered_map<std::string, ops::Value>& values, gpu::CommandRecorder& recorder,
    bool profiled) {
  const bool may_capture_more = captured.size() < kMaxCapturesPerPlan && !plan->subplans.empty();
  if (!replay_enabled || profiled || plan_runs < 1 || pool.tracing() ||
      (!captured.empty() && !may_capture_more))
    return nullptr;
  auto capture = std::make_unique<CapturedRun>();
  for (const auto& spec : input_specs) {
    const ops::Value& v = values.at(spec.name);
    if (v.device.defined()) {
      capture->device_inputs[spec.name] = {v.device.buffer(), v.device.byte_offset(), v.device.dtype(),
                                           v.device.numel()};
    }
    // A clone: the caller may pass a view of memory it rewrites before the next run.
    if (v.host.defined()) capture->host_inputs[spec.name] = inputs.at(spec.name).clone();
  }
  recorder.set_tape(&capture->tape);
  return capture;
}

// Walks the plan with the run's op context; uploads while recording go through the recorder, in
// order with the dispatches (see CommandRecorder::upload): a pooled buffer may be reused within the run.
Session::Impl::Recorded Session::Impl::record_walk(std::unordered_map<std::string, ops::Value> values,
                                                   gpu::CommandRecorder& recorder,
                                                   gpu::Profiler* active_profiler,
                                                   std::map<std::string, NodeCost>& profile_costs) {
  Recorded recorded;
  recorded.op_context = std::make_unique<ops::OpContext>(
      ops::OpContext{{context, pipelines, tuning}, recorder, pool, persistent_pool, 0, nullptr});
  ops::OpContext& op_context = *recorded.op_context;
  op_context.weights_pool = &weights_pool;
  op_context.to_device = [this, &recorder](const ops::Value& v) -> Tensor {
    if (v.device.defined()) return v.device;
    if (!v.host.defined()) throw ModelError("internal: undefined value used");
    if (v.constant && v.host.numel() > 0) {
      auto cached = uploaded_constants.find(v.host.data());
      if (cached == uploaded_constants.end() || cached->second.dtype() != v.host.dtype() ||
          cached->second.shape() != v.host.shape()) {
        // A large one (HTDemucs' ScatterND index grids) through the upload ring's reused staging: a
        // queue write makes a staging buffer of its own for it (docs/benchmark-log.md, 2026-12-07).
        Tensor t = v.host.byte_size() >= kStagedConstantBytes
                       ? Tensor::upload_staged(context, persistent_pool, v.host.dtype(), v.host.shape(), v.host.data())
                       : Tensor::upload(context, persistent_pool, v.host.dtype(), v.host.shape(), v.host.data());
        cached = uploaded_constants.insert_or_assign(v.host.data(), std::move(t)).first;
      }
      return cached->second;
    }
    return Tensor::upload(recorder, pool, v.host.dtype(), v.host.shape(), v.host.data());
  };
  // Chunked submits overlap recording with GPU work; queue order keeps pooled buffers reused across
  // chunks correct. Profiled runs submit once (their timestamps are resolved per command buffer).
  recorded.record_by_op = std::make_unique<std::map<std::string, double>>();
  recorded.slow_nodes = std::make_unique<std::map<std::string, double>>();
  runtime::WalkResources resources{context,
                                   recorder,
                                   op_context,
                                   weights_pool,
                                   uploaded,
                                   node_states,
                                   constant_host_results,
                                   *recorded.record_by_op,
                                   active_profiler != nullptr,
                                   active_profiler ? 0 : first_submit_dispatches,
                                   first_submit_dispatches,
                                   active_profiler ? &profile_costs : nullptr};
  resources.slow_nodes = recorded.slow_nodes.get();
  resources.weights_uploaded = &weights_uploaded;
  if (pool.tracing()) {
    resources.traced_pool = &pool;
    resources.step_marks = &memory.marks;
  }
  recorded.walk = std::make_unique<runtime::GraphWalk>(resources);
  recorded.scope = std::make_unique<runtime::Scope>(runtime::Scope{&plan->graph, nullptr, std::move(values)});
  recorded.walk->walk(*plan, *recorded.scope);
  return recorded;
}

// Each graph output: known on the host, read back behind the run's last dispatch, or (run_device)
// copied into the Device's pool.
std::vector<Session::Impl::PendingRun::Output> Session::Impl::record_outputs(
    runtime::GraphWalk& walk, const runtime::Scope& scope, gpu::CommandRecorder& recorder,
    const std::set<std::string>& on_device) {
  const Graph& planned = plan->graph;
  std::vector<PendingRun::Output> outputs;
  for (const auto& name : planned.outputs) {
    ops::Value v = walk.lookup(scope, planned.nodes.empty() ? Node{} : planned.nodes.back(), name);
    if (!v.defined() || v.is_sequence())
      throw ModelError(fmt::format("graph output '{}' is {}: onda returns only tensors", name,
                                   v.defined() ? "a sequence" : "an empty optional"));
    PendingRun::Output out;
    out.name = name;
    if (on_device.count(name)) {
      out.kept = keep_on_device(v, recorder);
      if (v.on_host()) {
        out.host = v.host;
      } else {
        out.device = v.device;  // for a capture of this run
      }
    } else if (v.on_host()) {
      out.host = v.host;
    } else {
      out.device = v.device;
      out.download = v.device.begin_download(context, recorder);
    }
    outputs.push_back(std::move(out));
  }
  return outputs;
}

void Session::Impl::read_profile(RunStats& stats, const std::map<std::string, NodeCost>& profile_costs) {
  for (const auto& e : profiler->entries()) {
    const size_t tab = e.name.find('\t');
    const size_t tab2 = tab == std::string::npos ? tab : e.name.find('\t', tab + 1);
    ProfileLine line{tab == std::string::npos ? e.name : e.name.substr(0, tab),
                     tab == std::string::npos ? "" : e.name.substr(tab + 1, tab2 - tab - 1),
                     e.total_ms,
                     e.count,
                     {}};
    if (tab2 != std::string::npos) line.input_shapes = e.name.substr(tab2 + 1);
    auto cost = profile_costs.find(e.name);
    runtime::set_roofline(line, cost == profile_costs.end() ? NodeCost{} : cost->second,
                          kernels::device_peak({context, pipelines}));
    stats.profile.push_back(std::move(line));
  }
  runtime::set_roofline_totals(stats, kernels::device_peak({context, pipelines}));
  stats.profile_span_ms = profiler->span_ms();
  profiler->clear();
}

void Session::Impl::keep_capture(std::unique_ptr<CapturedRun> capture, const PendingRun& run) {
  for (const auto& out : run.outputs) capture->outputs.push_back({out.name, out.host, out.device, {}, {}});
  capture->stats = run.stats;
  capture->stats.profile.clear();
  // The values released during the run sit in the pools' free lists now: the tape keeps them.
  std::vector<wgpu::Buffer> buffers = capture->tape.buffers();
  for (const auto& [name, slot] : capture->device_inputs) buffers.push_back(slot.buffer);
  for (gpu::BufferPool* p : {&pool, &persistent_pool, &weights_pool}) {
    for (auto& loan : p->claim(buffers)) capture->claimed.push_back(std::move(loan));
  }
  captured.push_back(std::move(capture));
}

// The memory plan's life per input shape: the plan's first run is traced, the plan made from the
// trace and installed, later runs follow it. A run that asked for something the plan did not
// foresee is traced again (up to kMemoryPlanAttempts times, then the pool allocates as before).
void Session::Impl::begin_memory_run() {
  if (memory.planning.valid()) adopt_plan(memory.planning.get(), memory.traced_pool_bytes);
  if (memory.to_install) {
    if (!pending.empty()) context.finish();  // the traced run's buffers are free once it completed
    pool.trim();
    runtime::ActivationPlan& p = *memory.to_install;
    pool.install_plan(p.arena_bytes, std::move(p.allocation_bytes), std::move(p.placements));
    memory.to_install.reset();
  }
  if (!memory.enabled) return;
  if (!pool.has_plan() && !memory.to_install && memory.attempts < kMemoryPlanAttempts) {
    memory.marks.clear();
    pool.begin_trace();
  } else if (pool.has_plan()) {
    pool.begin_planned_run();
  }
}

// Takes the plan of a traced run whose pool held `pool_bytes`; false when it will be installed (the
// traced run's buffers are not the plan's), true when the pool stays.
bool Session::Impl::adopt_plan(runtime::ActivationPlan planned, uint64_t pool_bytes) {
  const uint64_t weights = weights_pool.stats().bytes_in_use + persistent_pool.stats().bytes_in_use;
  runtime::check_memory_limit(memory_limit, planned.planned_bytes, weights, planned.peak_node,
                              "the activations of this input shape");
  memory.planned_bytes = planned.planned_bytes;
  memory.live_peak_bytes = planned.live_peak_bytes;
  // The plan replaces the pool only where its arenas hold less GPU memory than the pool holds after
  // the traced run (buffers on loan and cached; it keeps a buffer of every size class it needed
  // at once): the arenas may be the larger where buffers bound together, which go to different
  // arenas, cost more than the pool's size classes.
  if (planned.planned_bytes >= pool_bytes) {
    memory.enabled = false;
    return true;  // this run's buffers are the pool's, as every later run's
  }
  // Installed by the next run, after the traced run's buffers (back in the pool's free lists by
  // then) are dropped: the two never take memory at once.
  memory.to_install = std::make_unique<runtime::ActivationPlan>(std::move(planned));
  return false;  // this run's buffers are not the plan's
}

bool Session::Impl::finish_memory_run() {
  if (pool.tracing()) {
    gpu::AllocationTrace trace = pool.end_trace();
    ++memory.attempts;
    if (trace.allocations.empty()) return true;
    if (memory_limit == 0) {
      // Its arenas hold nothing the traced run uses: plan on the side; this run is no replay of the
      // planned ones, whatever the plan turns out to be.
      memory.traced_pool_bytes = pool.stats().bytes_allocated;
      memory.planning = std::async(
          std::launch::async, [trace = std::move(trace), marks = memory.marks, limits = context.limits()] {
            return runtime::plan_activations(trace, marks, limits);
          });
      return false;
    }
    // With a limit, a plan over it fails this run (ModelError naming the node at the peak).
    return adopt_plan(runtime::plan_activations(trace, memory.marks, context.limits()),
                      pool.stats().bytes_allocated);
  }
  if (pool.has_plan() && pool.plan_diverged()) {
    if (memory.attempts < kMemoryPlanAttempts) pool.drop_plan();
    return false;
  }
  return true;
}

Session::Impl::CapturedRun* Session::Impl::find_capture(const std::map<std::string, HostTensor>& inputs,
                                                        const std::map<std::string, Shape>& shapes) const {
  if (profiling || !plan || shapes != plan_shapes) return nullptr;
  for (const auto& capture : captured) {
    bool same = true;
    for (const auto& [name, host] : capture->host_inputs) {
      auto given = inputs.find(name);
      if (given == inputs.end()) {  // now a DeviceTensor: its values are not known here
        same = false;
        break;
      }
      const HostTensor& now = given->second;
      same = same && now.byte_size() == host.byte_size() &&
             std::memcmp(now.data(), host.data(), host.byte_size()) == 0;
    }
    if (same) return capture.get();
  }
  return nullptr;
}

void Session::Impl::replay(CapturedRun& capture, const std::map<std::string, HostTensor>& inputs,
                           const std::map<std::string, DeviceTensor>& device_inputs,
                           const std::set<std::string>& on_device,
                           std::chrono::steady_clock::time_point start) {
  auto recorder_owner = std::make_unique<gpu::CommandRecorder>(context);
  gpu::CommandRecorder& recorder = *recorder_owner;
  // Queue writes: after the work submitted so far (which may still read the old inputs), before the
  // replay's first submit; device inputs: GPU copies recorded before the tape.
  uint64_t host_upload_bytes = 0;
  for (const auto& [name, slot] : capture.device_inputs) {
    if (auto on_device = device_inputs.find(name); on_device != device_inputs.end()) {
      const Tensor& source = on_device->second.impl().tensor;
      const uint64_t bytes = (source.device_bytes() + 3) / 4 * 4;
      if (bytes > 0) recorder.copy(source.buffer(), source.byte_offset(), slot.buffer, slot.offset, bytes);
      continue;
    }
    const HostTensor& host = inputs.at(name);
    const std::vector<uint8_t> bytes = Tensor::to_device_layout(slot.dtype, slot.numel, host.data());
    gpu::upload(context, slot.buffer, slot.offset, bytes.data(), bytes.size());
    host_upload_bytes += host.byte_size();
  }
  capture.tape.replay(recorder);
  PendingRun run;
  run.start = start;
  run.stats = capture.stats;
  run.stats.record_ms = ms_since(start);
  run.stats.record_ms_by_op = {{"(replay)", run.stats.record_ms}};
  run.stats.buffers_allocated = 0;
  run.stats.host_upload_bytes = host_upload_bytes;
  for (const auto& out : capture.outputs) {
    PendingRun::Output o{out.name, out.host, out.device, {}, {}};
    if (on_device.count(o.name)) {
      o.kept = keep_on_device(o.host.defined() ? ops::Value{.host = o.host} : ops::Value{.device = o.device},
                              recorder);
    } else if (!o.host.defined()) {
      o.download = o.device.begin_download(context, recorder);
    }
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
  return collect_split().host;
}

RunOutputs Session::Impl::collect_split() {
  PendingRun run = std::move(pending.front());
  pending.pop_front();
  RunOutputs outputs;
  bool read_back = false;
  for (auto& out : run.outputs) {
    if (out.kept.defined()) {
      outputs.device[out.name] = make_device_tensor(device, out.kept);
    } else if (out.host.defined()) {
      outputs.host[out.name] = out.host;
    } else {
      // The readbacks were recorded behind the run's last dispatch: done reading, the run is done.
      const std::vector<uint8_t> bytes = out.device.host_bytes_from_device(out.download.finish(context));
      outputs.host[out.name] =
          HostTensor::copy_of(out.device.dtype(), out.device.shape(), bytes.data(), bytes.size());
      run.stats.host_download_bytes += bytes.size();
      read_back = true;
    }
  }
  if (!read_back) context.finish();  // nothing read back: wait for the run's work itself
  finish_collect(run);
  return outputs;
}

void Session::Impl::finish_collect(PendingRun& run) {
  context.check_errors();
  // The readbacks were the run's last commands: everything it retained is free now.
  run.recorder->release_in_flight();
  if (run.guards) context.guards().finish_check(run.guards->finish(context));
  run.stats.gpu_wait_ms = ms_since(run.submitted);
  run.stats.wall_ms = ms_since(run.start);
  stats = std::move(run.stats);
}

}  // namespace onda
