// onda's public C++ API: load an ONNX model once, run it many times on the GPU.
//
//   auto session = onda::Session::open("model.onnx");
//   auto outputs = session->run({{"mix", input}});   // host tensors in, host tensors out
//
//   auto device = onda::Device::open();              // one GPU context for several sessions
//   auto a = onda::Session::open("stft.onnx", {}, device);
//   auto b = onda::Session::open_bytes(model_bytes, {}, device);
//   auto spec = a->run_device({{"wave", input}}, {});   // outputs stay on the GPU
//   auto out = b->run({}, {{"spec", spec.at("spec")}});
//
// Every node runs on the GPU (WebGPU); shape arithmetic that exporters emit is evaluated on the
// host once the input shapes are known. All dispatches of one run are recorded and submitted
// together. Errors (malformed model, unsupported op, bad input, device limit, device loss) are
// exceptions (onda/error.h) with messages that name the node and the problem.
//
// Thread safety: a Session may be called from any thread; its calls (and those of every other
// Session and DeviceTensor on its Device) are serialised by the Device's lock (device.h), so two
// threads calling one Session never corrupt it, but their runs do not overlap. inputs(), outputs()
// and adapter_name() read immutable data. last_run() is the stats of the last run of the Session on
// any thread: read it from the thread that ran, or after the runs of other threads are done.
// For parallel CPU-side work, give each thread its own Session (on one shared Device, or on its own).
// Streams over one Session (stream.h) may run on several threads; each Stream on one at a time.
// The table of what may run concurrently: docs/library.md.
#pragma once
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "onda/device.h"
#include "onda/device_tensor.h"
#include "onda/error.h"
#include "onda/host_tensor.h"  // onda::HostTensor (public name onda::Tensor): dtype + shape + bytes

namespace onda {

// The bytes of an external-data file of a model opened from memory, by its `location` (relative,
// as written in the model). Throw (any exception) when it is unknown; onda keeps the returned bytes
// as long as the session needs them, so it may move a buffer in without a copy.
using ExternalDataResolver = std::function<std::vector<std::byte>(const std::string& location)>;

struct SessionOptions {
  // Sessions opened without a Device make their own on this adapter: index or name substring;
  // "" = ONDA_ADAPTER or the high-performance adapter. Ignored when a Device is given.
  std::string adapter;
  bool profile = false;  // GPU time per dispatch (timestamp queries), in RunStats::profile
  // Submit recorded work in pieces (the first after this many dispatches, each later one twice as
  // large, up to 64x) so the GPU runs while the CPU records the rest; 0: one submit per run.
  // Profiled runs always submit once.
  uint32_t first_submit_dispatches = 16;
  // The kernel families' tuning (FFT, RNN, GEMM, conv; docs/architecture.md): empty = the choices
  // measured on GPUs, each family's automatic rule reading the device's facts. Benchmarks and
  // comparisons override fields as "family.field=value" assignments, e.g. "rnn.step_kernel=vec4"
  // (the forms: src/kernels/kernel_tuning.h); a malformed one is an onda::InputError at open.
  std::vector<std::string> tuning;
  // Sessions opened without a Device: largest storage binding the kernels may use, in bytes (at least 64
  // KiB); 0 = the adapter's maxStorageBufferBindingSize (DeviceOptions::max_storage_binding_bytes; ignored
  // when a Device is given). Lower it to run a model as an adapter with smaller bindings would (the kernels
  // split their work over several bindings); the outputs do not change.
  uint64_t max_storage_binding_bytes = 0;
  // GPU memory the session may use for one run, weights included, in bytes; 0 = no limit. The
  // activations follow a static memory plan (offsets in a few arenas, computed once per input
  // shape); a plan that needs more than this fails at plan time with an onda::ModelError naming the
  // node at the peak and the bytes needed, before the plan's memory is allocated.
  uint64_t memory_limit = 0;
  // Remember which pipelines the model's runs created, in a manifest beside the pipeline cache
  // (DeviceOptions::pipeline_cache_folder; none without one), and when a later session opens the
  // same model on the same kind of device, create them all up front on worker threads, so that its
  // first run does not parse and compile them one by one (a manifest that no longer matches what the
  // kernels render is never used for them: outputs are the same either way). Off: no manifest is read
  // or written, and pipelines are created as the first run records.
  bool pipeline_manifest = true;
};

// A memory plan computed without running (Session::plan_memory): the graph's values (their shapes
// after shape inference), live from their producer to their last reader, placed in arenas.
// Kernels' scratch buffers are not in it: a run's plan (RunStats::planned_activation_bytes) holds them.
struct MemoryPlanReport {
  uint64_t activation_bytes = 0;  // the arenas' total: what the plan allocates
  uint64_t live_peak_bytes = 0;   // the most value bytes live at one node: no plan needs less
  uint64_t weight_bytes = 0;      // initializers (GPU layout)
  size_t arenas = 0;
  size_t values = 0;
  std::string peak_node;  // the node at which live_peak_bytes is reached
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // < 0: bound from the input at run time
  // Per dimension: the model's symbolic name (ONNX dim_param, e.g. "batch") or "" (a size, or an
  // unnamed unknown dimension). Empty when the shape is.
  std::vector<std::string> dim_names;
};

struct ProfileLine {
  std::string op_type;
  std::string node;  // node name (or its first output's name)
  double gpu_ms = 0;
  uint64_t dispatches = 0;
  std::string input_shapes;  // e.g. "[1,64,128] [256,64,3] -" ("-": an omitted optional input)
  // Roofline: the node's work from its shapes (summed over its runs within the run, e.g. in a Loop)
  // and the least time the device's measured peaks (RunStats::peak_*) allow for it.
  double flops = 0;              // FP32 operations, an FMA counting two
  double bytes = 0;              // minimal bytes moved: inputs read once, outputs written once
  int64_t sequential_steps = 0;  // recurrent layers: dependent time steps
  double latency_floor_ms = 0;  // sequential_steps x one dependent dispatch (RunStats::dependent_dispatch_ms)
  double floor_ms = 0;          // max(flops / peak FLOP rate, bytes / peak bandwidth, latency_floor_ms)
  bool cost_modeled = false;    // false: an op the cost model does not know (its floor counts bytes only)
};

struct RunStats {
  double wall_ms = 0;      // run() from inputs to outputs on the host
  double record_ms = 0;    // CPU time planning and recording dispatches
  double gpu_wait_ms = 0;  // from the last submit until the GPU finished
  uint64_t dispatches = 0;
  uint64_t submits = 0;  // command buffers submitted (see SessionOptions::first_submit_dispatches)
  // GPU memory, as buffer capacities (the pool's size classes). Values are released after their last
  // reader, so the activation peak follows the widest point of the graph, not the sum of all values.
  uint64_t peak_gpu_bytes = 0;         // peak_activation_bytes + weight_bytes
  uint64_t peak_activation_bytes = 0;  // inputs, intermediates and outputs of this run on loan at the peak
  uint64_t weight_bytes = 0;           // held across runs: uploaded initializers, prepacked weights, tables
  uint64_t buffers_allocated = 0;      // device buffers created while recording (0 once the pool is warm)
  // Buffers held across runs that the run created (uploaded weights, prepacked weights, tables), and
  // the CPU time createBuffer took for all of the run's new buffers (these, the activations' and the
  // memory plan's arenas).
  uint64_t held_buffers_allocated = 0;
  double buffer_create_ms = 0;
  // The static memory plan (SessionOptions::memory_limit): its arenas' bytes once the first run of
  // a shape has been traced and planned (0 before), and the most traced bytes live at once. The plan
  // is made on a thread of its own while the traced run completes, and reported from the next run on;
  // with a memory_limit it is made before the traced run returns (which fails if it is over).
  uint64_t planned_activation_bytes = 0;
  uint64_t live_activation_bytes = 0;
  // Bytes that crossed between host and GPU memory for the run's inputs and outputs (DeviceTensor
  // inputs and run_device outputs cross nothing: they are copied on the GPU).
  uint64_t host_upload_bytes = 0;
  uint64_t host_download_bytes = 0;
  std::vector<ProfileLine> profile;  // with SessionOptions::profile: per node, most expensive first
  // Profiled runs: GPU time from the first dispatch's start to the last one's end; minus the sum of
  // `profile`, the GPU's idle gaps between dispatches (each dispatch its own pass in such a run).
  double profile_span_ms = 0;
  // Profiled runs: the device's peaks measured at start-up (once per adapter per process), and the
  // sum of the profile lines' floor_ms (the whole model's floor; gpu time / floor says how far off).
  double peak_flops_per_second = 0;  // FP32, an FMA-bound kernel
  double peak_bytes_per_second = 0;  // a large buffer copy, bytes read + written
  double dependent_dispatch_ms = 0;  // one dispatch of a chain of dependent tiny dispatches
  double profile_floor_ms = 0;
  // CPU time recording each op type (host ops: "host"; the chunked submits within the run: "(submit)";
  // building the plan of a new input shape: "(graph plan)"; weights uploaded on first use: "(weights)").
  std::map<std::string, double> record_ms_by_op;
  // What the run created for later runs to reuse, and its CPU time (within record_ms): a first run's
  // cost, zero once everything is warm.
  uint64_t pipelines_created = 0;
  double wgsl_render_ms = 0;      // rendering the new pipelines' WGSL
  double shader_module_ms = 0;    // createShaderModule: WGSL parsed and validated (Tint), blob cache or not
  double pipeline_create_ms = 0;  // createComputePipeline: code generation and the driver's compile, or the
                                  // blob cache's copies of them
  uint64_t bind_groups_created = 0;
  double bind_group_create_ms = 0;
  // Entries of the persistent pipeline cache (DeviceOptions::pipeline_cache_folder) Dawn read
  // (a warm cache's hits) and wrote (what it compiled) during the run.
  uint64_t pipeline_cache_loads = 0;
  uint64_t pipeline_cache_stores = 0;
  // Of pipelines_created, those made ahead of use from the model's pipeline manifest
  // (SessionOptions::pipeline_manifest), and the time the recording waited for them (not part of the
  // figures above: their parsing and compiling ran on other threads).
  uint64_t pipelines_prefetched = 0;
  double pipeline_prefetch_wait_ms = 0;
  // Nodes whose recording took over 0.5 ms (a warm run has next to none): "OpType name" -> ms.
  std::map<std::string, double> slow_node_record_ms;
};

// The outputs of Session::run_split: those asked for on the GPU, the rest read back to the host.
struct RunOutputs {
  std::map<std::string, HostTensor> host;
  std::map<std::string, DeviceTensor> device;
};

class Session {
 public:
  // Throws onda::ModelError listing every unsupported op at once, or naming what else is wrong.
  // Without a Device the session makes its own (SessionOptions::adapter).
  static std::unique_ptr<Session> open(const std::filesystem::path& model, const SessionOptions& options = {},
                                       std::shared_ptr<Device> device = nullptr);
  // A model serialised in memory (the bytes are not kept). External data comes from `resolver`;
  // without one, a model that needs external data is a ModelError.
  static std::unique_ptr<Session> open_bytes(std::span<const std::byte> model,
                                             const SessionOptions& options = {},
                                             std::shared_ptr<Device> device = nullptr,
                                             ExternalDataResolver resolver = nullptr);
  ~Session();

  const std::shared_ptr<Device>& device() const;
  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  std::string adapter_name() const;

  // Inputs by name (all graph inputs are required); returns every graph output by name.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);
  // The same with inputs from host and GPU memory (each input in exactly one of the maps; device
  // inputs must be on this session's Device). Small integer inputs that shape arithmetic reads
  // (shapes, axes) should come from the host.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& host_inputs,
                                        const std::map<std::string, DeviceTensor>& device_inputs);
  // As run(), with every output left on the GPU as a DeviceTensor of this session's Device: feed it
  // to the next run (a streaming model's state) or to another session on the same Device. Waits for
  // the GPU to finish the run, but nothing is read back.
  std::map<std::string, DeviceTensor> run_device(const std::map<std::string, HostTensor>& host_inputs,
                                                 const std::map<std::string, DeviceTensor>& device_inputs);
  // One run whose outputs named in `on_device` stay on the GPU (RunOutputs::device) while the others
  // are read back (RunOutputs::host), in one wait: a streaming model's state outputs stay, its frame
  // comes back (onda/stream.h). An unknown output name is an InputError.
  RunOutputs run_split(const std::map<std::string, HostTensor>& host_inputs,
                       const std::map<std::string, DeviceTensor>& device_inputs,
                       const std::set<std::string>& on_device);
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
  // The memory plan of the graph for these input shapes, computed without running anything (a dry
  // run; inputs with static declared shapes may be omitted). Throws onda::ModelError like run()
  // for shapes the model rejects, and when SessionOptions::memory_limit cannot hold the plan.
  MemoryPlanReport plan_memory(const std::map<std::string, std::vector<int64_t>>& input_shapes);

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace onda
