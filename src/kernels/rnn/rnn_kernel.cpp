// RnnKernel's planning (the constructor's steps) and the run's bindings; the strategies that record
// the recurrence are in rnn_strategies.cpp.
#include "kernels/rnn/rnn_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <stdexcept>

#include "gpu/buffer_pool.h"
#include "kernels/rnn/cooperative_probe.h"
#include "kernels/rnn/rnn_gather.h"
#include "kernels/rnn/rnn_run.h"
#include "kernels/rnn/rnn_shaders.h"
#include "kernels/rnn/rnn_time_chunks.h"

namespace onda::kernels::rnn {
namespace {

std::atomic<uint64_t> kernels_planned{0};

// The layer's extents from X's shape, checked against the spec and the weights.
RnnDims check_problem(const RnnSpec& spec, const RnnWeights& weights, const RnnProblem& p) {
  if (p.x_dtype != DType::f32 && p.x_dtype != DType::f16)
    throw std::invalid_argument("X must be float32 or float16");
  if (p.x_shape.size() != 3)
    throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(p.x_shape)));
  RnnDims d;
  d.seq = spec.layout == 0 ? p.x_shape[0] : p.x_shape[1];
  d.batch = spec.layout == 0 ? p.x_shape[1] : p.x_shape[0];
  d.input = p.x_shape[2];
  d.hidden = spec.hidden_size;
  d.dirs = spec.num_directions();
  d.gates = gate_count(spec.cell);
  if (weights.input_size != d.input || weights.hidden_size != d.hidden || weights.directions != d.dirs) {
    throw std::invalid_argument(fmt::format("X {} does not match the weights (input size {}, {} directions)",
                                            shape_string(p.x_shape), weights.input_size, weights.directions));
  }
  const size_t acts = static_cast<size_t>(activations_per_direction(spec.cell) * d.dirs);
  if (!spec.activations.empty() && spec.activations.size() != acts) {
    throw std::invalid_argument(
        fmt::format("{} activations given, expected {}", spec.activations.size(), acts));
  }
  if (p.y_c && spec.cell != CellType::lstm) throw std::invalid_argument("Y_c is for LSTM only");
  if (d.seq == 0 || d.batch == 0 || d.hidden == 0)
    throw std::invalid_argument("empty sequence, batch or hidden size");
  return d;
}

// A run's tensors against the spec: std::invalid_argument naming the first that does not fit.
void check_tensors(const RnnSpec& spec, const RnnInputs& in, const RnnOutputs& out) {
  if (!in.x.defined()) throw std::invalid_argument("X is required");
  require_float(in.x, "X");
  if (in.x.rank() != 3)
    throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(in.x.shape())));
  const Shape state = rnn_state_shape(spec, in.x.shape());
  if (in.sequence_lens.defined()) {
    if (in.sequence_lens.dtype() != DType::i32 && in.sequence_lens.dtype() != DType::i64) {
      throw std::invalid_argument("sequence_lens must be int32");  // (i64 is stored as i32 on the GPU)
    }
    require_shape(in.sequence_lens, {spec.layout == 0 ? in.x.shape()[1] : in.x.shape()[0]}, "sequence_lens");
  }
  if (in.initial_h.defined()) {
    require_float(in.initial_h, "initial_h");
    require_shape(in.initial_h, state, "initial_h");
  }
  if (in.initial_c.defined()) {
    if (spec.cell != CellType::lstm) throw std::invalid_argument("initial_c is for LSTM only");
    require_float(in.initial_c, "initial_c");
    require_shape(in.initial_c, state, "initial_c");
  }
  const auto check_out = [&](const Tensor& t, const Shape& shape, const char* name) {
    if (!t.defined()) return;
    if (t.dtype() != in.x.dtype()) throw std::invalid_argument(fmt::format("{} must have X's dtype", name));
    require_shape(t, shape, name);
  };
  check_out(out.y, rnn_y_shape(spec, in.x.shape()), "Y");
  check_out(out.y_h, state, "Y_h");
  check_out(out.y_c, state, "Y_c");
}

// What plan_rnn needs to know of the device (and where the weights' parameters start).
RnnDeviceFacts device_facts(const KernelContext& k, const RnnWeights& weights) {
  const wgpu::Limits& limits = k.gpu.limits();
  RnnDeviceFacts f;
  f.max_invocations = std::min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  f.workgroup_bytes = limits.maxComputeWorkgroupStorageSize;
  f.max_binding_bytes = limits.maxStorageBufferBindingSize;
  f.max_buffer_bytes = limits.maxBufferSize;
  f.gpu = k.gpu.adapter_description().type != "CPU";
  f.subgroup_min_size = k.gpu.has(gpu::Feature::Subgroups) ? k.gpu.subgroup_min_size() : 0;
  f.params_vec4_aligned = weights.params.element_offset(k.gpu) % 4 == 0;
  return f;
}

// The GEMM core's options for the projection and the GEMM step: the session's GEMM tuning.
gemm::GemmOptions gemm_options(const KernelContext& k) {
  gemm::GemmOptions options;
  options.tuning = k.tuning.gemm;
  return options;
}

// Tiles of `tile` covering `n`, as a grid extent.
uint32_t tiles(int64_t n, uint32_t tile, const char* what) {
  return u32((n + tile - 1) / tile, what);
}

// The grid of the cooperative kernel with tiling `t`.
gpu::WorkgroupCount cooperative_groups(const RnnDims& d, const CooperativeTiling& t) {
  return {u32((d.hidden + t.units - 1) / t.units, "unit tiles"), u32(t.row_blocks(d.batch), "row blocks"),
          u32(d.dirs, "dirs")};
}

}  // namespace

RnnProblem RnnProblem::of(const KernelContext& k, const RnnInputs& in, const RnnOutputs& out) {
  if (!in.x.defined()) throw std::invalid_argument("X is required");
  RnnProblem p;
  p.x_shape = in.x.shape();
  p.x_dtype = in.x.dtype();
  p.sequence_lens = in.sequence_lens.defined();
  p.y = out.y.defined();
  p.y_h = out.y_h.defined();
  p.y_c = out.y_c.defined();
  p.time_chunks = rnn_needs_time_chunks(k, in, out);
  return p;
}

RnnKernel::RnnKernel(const KernelContext& kernels, gpu::CommandRecorder& recorder,
                     gpu::BufferPool& weights_pool, const RnnSpec& spec,
                     std::shared_ptr<const RnnWeights> weights, const RnnProblem& problem,
                     const RnnOptions& options)
    : k_(kernels), spec_(spec), weights_(std::move(weights)), problem_(problem), options_(options) {
  ++kernels_planned;
  d_ = check_problem(spec_, *weights_, problem_);
  if (problem_.time_chunks) {
    time_chunks_ =
        std::make_unique<RnnTimeChunks>(k_, recorder, weights_pool, spec_, weights_, problem_, options_);
    return;
  }
  plan_projection();
  plan_uniforms();
  plan_kernel();
  plan_stages();
  plan_gemms();
}

RnnKernel::~RnnKernel() = default;

// Projection X W^T into xw: one GEMM over all rows when it fits one binding, else per chunk of
// timesteps (X made time-major first), one GEMM per direction and chunk.
void RnnKernel::plan_projection() {
  const uint64_t limit = options_.max_projection_bytes ? options_.max_projection_bytes
                                                       : k_.gpu.limits().maxStorageBufferBindingSize;
  const uint64_t step_bytes = static_cast<uint64_t>(d_.batch * d_.dirs * d_.gates * d_.hidden) * 4;
  chunked_ = step_bytes * static_cast<uint64_t>(d_.seq) > limit;
  chunk_ = chunked_ ? std::max<int64_t>(1, static_cast<int64_t>(limit / step_bytes)) : d_.seq;
  // A chunk's rows of X are a view of X where it is time-major (layout 0); but a float16 view must
  // start on an even element (packed halves), so X is widened first where a chunk of either
  // direction would start on an odd one.
  bool odd_start = false;
  for (int64_t s0 = 0; chunked_ && problem_.x_dtype == DType::f16 && s0 < d_.seq; s0 += chunk_) {
    const int64_t s1 = std::min(d_.seq, s0 + chunk_);
    for (int64_t dir = 0; dir < d_.dirs; ++dir) {
      const bool reverse = spec_.direction == Direction::reverse || dir == 1;  // as record_projection
      const int64_t t0 = reverse ? d_.seq - s1 : s0;
      odd_start = odd_start || (t0 * d_.batch * d_.input) % 2 != 0;
    }
  }
  widen_x_ = chunked_ && (spec_.layout == 1 || odd_start);
}

// The cell's flags and every uniform that does not depend on a run's buffers.
void RnnKernel::plan_uniforms() {
  const int64_t gh = d_.gates * d_.hidden;
  uint32_t flags = 0;
  if (problem_.sequence_lens) flags |= kSeqLens;
  if (problem_.y) flags |= kY;
  if (problem_.y_h) flags |= kYh;
  if (problem_.y_c) flags |= kYc;
  if (spec_.direction == Direction::reverse) flags |= kReverse0;
  if (spec_.direction == Direction::bidirectional) flags |= kReverse0 << 1;
  if (spec_.input_forget) flags |= kInputForget;
  if (weights_->has_peepholes) flags |= kPeephole;
  if (spec_.clip) flags |= kClip;
  if (spec_.layout == 1) flags |= kLayout1;
  if (spec_.y_directions_inner) flags |= kYDirectionsInner;
  if (chunked_ || spec_.layout == 0) flags |= kTimeMajorXw;  // xw rows t*B + b (else b*S + t)
  flags_ = flags;
  StepUniforms& u = uniforms_;
  u.dims[1] = u32(d_.seq, "sequence length");
  u.dims[2] = u32(d_.batch, "batch");
  u.dims[3] = u32(d_.hidden, "hidden_size");
  u.misc[0] = u32(d_.dirs, "directions");
  u.misc[1] = flags;
  u.misc[2] = u32(chunked_ ? gh : d_.dirs * gh, "projection row");
  u.xw_base[1] = chunked_ ? u32(chunk_ * d_.batch * gh, "projection chunk") : u32(gh, "gates");
  u.wts[0] = weights_->bias_offset;
  u.wts[1] = weights_->peephole_offset;
  u.clip[0] = spec_.clip.value_or(0.0f);
  const auto acts = spec_.activations.empty() ? default_activations(spec_.cell, static_cast<int>(d_.dirs))
                                              : spec_.activations;
  for (size_t i = 0; i < acts.size(); ++i) {
    u.act[i][0] = static_cast<float>(static_cast<uint32_t>(acts[i].kind));
    u.act[i][1] = acts[i].alpha;
    u.act[i][2] = acts[i].beta;
  }
}

// Whether `pipeline` (a kernel that trades h through an exchange) runs its grid `groups` all at once:
// its probe dispatch, with stand-in buffers in the bindings it does not touch in that mode.
bool RnnKernel::grid_resident(const wgpu::ComputePipeline& pipeline, gpu::WorkgroupCount groups) const {
  // Probe mode, the spin bound (CPU adapters' threads may start late), the exchange at element 0.
  StepUniforms probe = uniforms_;
  probe.dims[0] = 0xfffffffeu;
  probe.dims[1] = device_facts(k_, *weights_).gpu ? (1u << 16) : (1u << 24);
  probe.st[3] = 0;
  std::vector<wgpu::Buffer> stand_ins;
  std::vector<gpu::BufferBinding> bindings;
  for (int i = 0; i < 8; ++i) {  // 0-6 as in Run::bindings; 7, the exchange, is the probe's own
    stand_ins.push_back(
        gpu::create_buffer(k_.gpu, 256, wgpu::BufferUsage::Storage, "onda rnn probe stand-in"));
    bindings.push_back(gpu::BufferBinding{stand_ins.back(), 0, 256});
  }
  return probe_grid_resident(k_, pipeline, bindings, 7, &probe, sizeof probe, groups);
}

// The kernel and its tiling (plan_rnn), the cooperative candidates probed with their own pipelines.
void RnnKernel::plan_kernel() {
  const RnnDeviceFacts device = device_facts(k_, *weights_);
  const TemplateValues layer = layer_values(spec_, flags_, d_.dirs);
  const GridResidentProbe probe = [&](const CooperativeTiling& t, bool subgroup_reduce) {
    const auto& pipeline = rnn_pipeline(
        k_.pipelines,
        cooperative_shader(spec_, layer, t, d_.hidden, subgroup_reduce, device.gpu, problem_.x_dtype),
        "rnn_cooperative");
    return grid_resident(pipeline, cooperative_groups(d_, t));
  };
  plan_ = plan_rnn(spec_, d_, chunked_, options_, k_.tuning.rnn, device, probe);
}

// A step kernel's pipeline and grid (vec4, tiled or dot step; the whole-sequence dot kernel) for one
// phase of the cell.
RnnKernel::Stage RnnKernel::step_stage(const RnnStepPhase& phase, const char* label) const {
  const TemplateValues layer = layer_values(spec_, flags_, d_.dirs);
  const bool on_gpu = device_facts(k_, *weights_).gpu;
  const DType out = problem_.x_dtype;
  const RnnDims& d = d_;
  switch (plan_.kind) {
    case RnnKernelKind::vec4_step: {
      const Vec4StepTiling& t = plan_.vec4;
      return {&rnn_pipeline(k_.pipelines, vec4_step_shader(spec_, layer, t, d.hidden, on_gpu, out),
                            t.persistent ? "rnn_vec4_sequence" : label),
              {tiles(d.hidden, t.units(), "hidden tiles"), tiles(d.batch, t.rows(), "batch tiles"),
               u32(d.dirs, "dirs")}};
    }
    case RnnKernelKind::tiled_step: {
      const TiledStepTiling& t = phase.tiled;
      return {&rnn_pipeline(
                  k_.pipelines,
                  tiled_step_shader(spec_, layer, phase.name.c_str(), phase.gates_in_product, t, out), label),
              {tiles(d.hidden, t.units, "hidden tiles"), tiles(d.batch, t.rows, "batch tiles"),
               u32(d.dirs, "dirs")}};
    }
    default: {  // dot_step, whole_sequence
      const bool whole_sequence = plan_.kind == RnnKernelKind::whole_sequence;
      const StepTiling& t = phase.dot;
      return {&rnn_pipeline(k_.pipelines,
                            step_shader(spec_, layer, phase.name.c_str(), phase.gates_in_product, t,
                                        whole_sequence, out),
                            label),
              {whole_sequence ? 1u : tiles(d.hidden, t.units, "hidden tiles"),
               tiles(d.batch, t.batch_tile, "batch tiles"), u32(d.dirs, "dirs")}};
    }
  }
}

// The pipelines and grids of the chosen kernel (both phases of a two-phase step).
void RnnKernel::plan_stages() {
  const TemplateValues layer = layer_values(spec_, flags_, d_.dirs);
  const bool on_gpu = device_facts(k_, *weights_).gpu;
  const DType out = problem_.x_dtype;
  const RnnDims& d = d_;
  switch (plan_.kind) {
    case RnnKernelKind::resident:
      first_ = {
          &rnn_pipeline(k_.pipelines,
                        resident_shader(spec_, layer, plan_.resident, d.hidden, plan_.subgroup_reduce, out),
                        "rnn_resident"),
          {1, tiles(d.batch, plan_.resident.rows, "row blocks"), u32(d.dirs, "dirs")}};
      return;
    case RnnKernelKind::cooperative:
      first_ = {&rnn_pipeline(k_.pipelines,
                              cooperative_shader(spec_, layer, plan_.cooperative, d.hidden,
                                                 plan_.subgroup_reduce, on_gpu, out),
                              "rnn_cooperative"),
                cooperative_groups(d, plan_.cooperative)};
      exchange_guard_ =
          exchange_guard("rnn_cooperative", "the tuning rnn.cooperative=0 avoids the cooperative kernel");
      return;
    case RnnKernelKind::row_sequence:
      first_ = {&rnn_pipeline(k_.pipelines, row_sequence_shader(spec_, layer, plan_.rows, d.hidden, out),
                              "rnn_rows"),
                {1, tiles(d.batch, plan_.rows.rows, "row blocks"), u32(d.dirs, "dirs")}};
      return;
    case RnnKernelKind::gemm_step:
      first_ = {&rnn_pipeline(k_.pipelines, gates_step_shader(spec_, layer, out), "rnn_step_gates"),
                gpu::split_workgroups((d.dirs * d.batch * d.hidden + 255) / 256, k_.gpu.limits())};
      return;
    default:
      break;
  }
  if (plan_.two_phase) {
    first_ = step_stage(plan_.phases.at(0), "rnn_step_zr");
    second_ = step_stage(plan_.phases.at(1), "rnn_step_h");
  } else {
    first_ = step_stage(plan_.phases.at(0),
                        plan_.kind == RnnKernelKind::whole_sequence ? "rnn_sequence" : "rnn_step");
  }
  if (plan_.kind == RnnKernelKind::vec4_step && plan_.vec4.persistent && options_.probe_cooperative_grid &&
      !grid_resident(*first_.pipeline, first_.groups)) {
    throw std::invalid_argument(fmt::format(
        "RNN persistent vec4 step: its grid of {} workgroups of {} invocations does not run all at once on "
        "this device",
        uint64_t{first_.groups.x} * first_.groups.y * first_.groups.z, plan_.vec4.workgroup_size()));
  }
  if (plan_.kind == RnnKernelKind::vec4_step && plan_.vec4.persistent) {
    exchange_guard_ = exchange_guard("rnn_vec4_sequence", "a vec4 tiling without PERSISTENT avoids it");
  }
}

// The error a guarded exchange kernel (`name`, grid first_.groups) reports when its waits gave up;
// `avoid`: how to stay clear of it.
std::string RnnKernel::exchange_guard(const char* name, const char* avoid) const {
  const gpu::WorkgroupCount& g = first_.groups;
  return fmt::format(
      "{}recurrent layer (hidden {}, {} steps, batch {}): the {} kernel's grid of {} workgroups was not "
      "resident at "
      "once (another workload on the GPU?), its waits gave up and the outputs are invalid; {}",
      options_.label.empty() ? "" : options_.label + ": ", d_.hidden, d_.seq, d_.batch, name,
      uint64_t{g.x} * g.y * g.z, avoid);
}

// The projection GEMM (one, or one per chunk length) and the GEMM step's recurrent product.
void RnnKernel::plan_gemms() {
  const int64_t gh = d_.gates * d_.hidden;
  if (!chunked_) {
    gemm::GemmProblem problem;
    problem.a_shape = {d_.seq * d_.batch, d_.input};
    problem.a_dtype = problem_.x_dtype;
    problem.b_shape = weights_->w_t.shape();
    projection_.emplace(k_, problem, gemm_options(k_));
  } else {
    // Per direction, W [G H, I] as a transposed B (W^T's columns of one direction are not one
    // contiguous tensor); X of layout 1 is widened to float32 while made time-major.
    const auto chunk_projection = [&](int64_t steps) {
      gemm::GemmProblem problem;
      problem.a_shape = {steps * d_.batch, d_.input};
      problem.a_dtype = widen_x_ ? DType::f32 : problem_.x_dtype;
      problem.b_shape = {gh, d_.input};
      problem.b_dtype = weights_->w.dtype();
      problem.transpose_b = true;
      return gemm::Gemm(k_, problem, gemm_options(k_));
    };
    projection_.emplace(chunk_projection(chunk_));
    if (d_.seq % chunk_ != 0) projection_tail_.emplace(chunk_projection(d_.seq % chunk_));
  }
  if (plan_.kind == RnnKernelKind::gemm_step) {
    // gates[D, B, G H] = H_prev[D, B, H] R^T[D, H, G H] (R^T at the start of the parameters).
    gemm::GemmProblem problem;
    problem.a_shape = {d_.dirs, d_.batch, d_.hidden};
    problem.b_shape = {d_.dirs, d_.hidden, gh};
    gates_product_.emplace(k_, problem, gemm_options(k_));
  }
}

// The run's scratch (state, projection, stand-ins for omitted outputs), the initial states copied in,
// and the uniforms completed with the buffers' offsets.
RnnKernel::Run RnnKernel::bind(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& in,
                               const RnnOutputs& out) const {
  const RnnDims& d = d_;
  const int64_t dbh = d.dirs * d.batch * d.hidden;
  const RnnWeights& weights = *weights_;
  Run run{in, {}, 0, {}, {}, {}, {}, {}};
  run.state = Tensor::empty(pool, DType::f32, {5 * dbh});
  run.st0 = run.state.element_offset(k_.gpu);
  // Initial states [D, B, H] (layout 1 gives [B, D, H]: permuted while widening).
  const auto init_state = [&](const Tensor& initial, int64_t offset, const char* name) {
    if (!initial.defined()) return record_zero(recorder, run.state, offset, dbh);
    const int64_t h = d.hidden;
    const std::array<int64_t, 3> strides = spec_.layout == 0 ? std::array<int64_t, 3>{d.batch * h, h, 1}
                                                             : std::array<int64_t, 3>{h, d.dirs * h, 1};
    record_gather(k_, recorder, initial, run.state, static_cast<uint32_t>(offset), {d.dirs, d.batch, h},
                  strides, name);
  };
  init_state(in.initial_h, 0, "rnn_initial_h");
  if (spec_.cell == CellType::lstm) init_state(in.initial_c, 2 * dbh, "rnn_initial_c");
  run.xw = Tensor::empty(pool, DType::f32, {chunk_ * d.batch * d.dirs * d.gates * d.hidden});
  run.x_time_major = in.x;
  if (widen_x_) {
    run.x_time_major = Tensor::empty(pool, DType::f32, {d.seq, d.batch, d.input});
    const std::array<int64_t, 3> strides = spec_.layout == 1
                                               ? std::array<int64_t, 3>{d.input, d.seq * d.input, 1}
                                               : std::array<int64_t, 3>{d.batch * d.input, d.input, 1};
    record_gather(k_, recorder, in.x, run.x_time_major, 0, {d.seq, d.batch, d.input}, strides,
                  "rnn_x_time_major");
  }
  // Outputs: the real tensors, or small stand-ins so every binding exists.
  const auto bind_out = [&](const Tensor& t) {
    if (t.defined()) return t;
    run.stand_ins.push_back(Tensor::empty(pool, in.x.dtype(), {2}));
    return run.stand_ins.back();
  };
  const Tensor y = bind_out(out.y), yh = bind_out(out.y_h), yc = bind_out(out.y_c);
  const Tensor& lens = in.sequence_lens.defined() ? in.sequence_lens : weights.params;
  run.u = uniforms_;
  run.u.misc[3] = run.xw.element_offset(k_.gpu);
  run.u.wts[2] = lens.element_offset(k_.gpu);
  run.u.outs[0] = y.element_offset(k_.gpu);
  run.u.outs[1] = yh.element_offset(k_.gpu);
  run.u.outs[2] = yc.element_offset(k_.gpu);
  run.u.outs[3] = u32(run.st0 + 3 * dbh, "state");
  run.bindings = {run.xw.binding(k_.gpu),    weights.params.binding(k_.gpu),
                  run.state.binding(k_.gpu), lens.binding(k_.gpu),
                  y.binding(k_.gpu),         yh.binding(k_.gpu),
                  yc.binding(k_.gpu)};
  return run;
}

void RnnKernel::drop_unread_weights() {
  // Chunked projections read W itself; the chunks of time were planned from the caller's tensors.
  if (time_chunks_ || chunked_) return;
  auto lean = std::make_shared<RnnWeights>(*weights_);
  lean->w = lean->r = lean->b = lean->p = Tensor();
  weights_ = std::move(lean);
}

void RnnKernel::record(gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnInputs& in,
                       const RnnOutputs& out) const {
  check_tensors(spec_, in, out);
  const RnnProblem given = RnnProblem::of(k_, in, out);
  if (!(given == problem_)) {
    throw std::invalid_argument(fmt::format(
        "RNN: the run's tensors (X {}) are not those the layer was planned for (X {}, or another set of "
        "optional tensors)",
        shape_string(given.x_shape), shape_string(problem_.x_shape)));
  }
  if (time_chunks_) return time_chunks_->record(recorder, pool, in, out);
  Run run = bind(recorder, pool, in, out);
  switch (plan_.kind) {
    case RnnKernelKind::resident:
      return record_resident(recorder, run);
    case RnnKernelKind::cooperative:
      return record_exchange(recorder, pool, run, "rnn_cooperative");
    case RnnKernelKind::row_sequence:
      return record_row_sequence(recorder, run);
    case RnnKernelKind::whole_sequence:
      return record_whole_sequence(recorder, run);
    case RnnKernelKind::gemm_step:
      return record_gemm_steps(recorder, pool, run);
    case RnnKernelKind::vec4_step:
      if (plan_.vec4.persistent) {
        return record_exchange(recorder, pool, run, "rnn_vec4_sequence");
      }
      return record_steps(recorder, run);
    case RnnKernelKind::tiled_step:
    case RnnKernelKind::dot_step:
      return record_steps(recorder, run);
  }
}

void record_rnn(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                const RnnSpec& spec, const RnnWeights& weights, const RnnInputs& in, const RnnOutputs& out,
                const RnnOptions& options) {
  check_tensors(spec, in, out);
  const RnnKernel kernel(k, recorder, pool, spec, std::make_shared<const RnnWeights>(weights),
                         RnnProblem::of(k, in, out), options);
  kernel.record(recorder, pool, in, out);
}

void record_rnn(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                const RnnSpec& spec, const RnnInputs& in, const RnnOutputs& out, const RnnOptions& options) {
  const RnnWeights weights = prepare_rnn_weights(k, recorder, pool, spec, in.w, in.r, in.b, in.p);
  record_rnn(k, recorder, pool, spec, weights, in, out, options);
}

uint64_t rnn_kernels_planned() {
  return kernels_planned.load();
}

}  // namespace onda::kernels::rnn
