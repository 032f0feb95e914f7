#include "kernels/rnn/rnn_kernel.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <stdexcept>

#include "gpu/run_guards.h"
#include "kernels/common/tensor_access.h"
#include "kernels/gemm/gemm.h"
#include "kernels/rnn/cooperative_probe.h"
#include "kernels/rnn/rnn_plan.h"
#include "kernels/rnn/rnn_shaders.h"
#include "kernels/rnn/rnn_step_tiling.h"
#include "kernels/rnn/rnn_time_chunks.h"
#include "kernels/shader_template.h"

namespace onda::kernels::rnn {
namespace {

// Mirrors StepParams in rnn_step.wgsl.
struct StepUniforms {
  uint32_t dims[4];
  uint32_t misc[4];
  uint32_t xw_base[4];
  uint32_t st[4];
  uint32_t wts[4];
  uint32_t outs[4];
  float clip[4];
  float act[6][4];
};

enum StepFlags : uint32_t {
  kSeqLens = 1, kY = 2, kYh = 4, kYc = 8, kReverse0 = 16, kInputForget = 64, kPeephole = 128, kClip = 256,
  kLayout1 = 512, kTimeMajorXw = 1024,
};

// Mirrors GatherParams in rnn_gather.wgsl.
struct GatherUniforms {
  uint32_t dims[4];
  uint32_t strides[4];
  uint32_t dst_offset[4];
};

uint32_t u32(int64_t v, const char* what) {
  if (v < 0 || v > 0xFFFFFFFFll) throw std::invalid_argument(fmt::format("RNN: {} = {} out of range", what, v));
  return static_cast<uint32_t>(v);
}


void require_shape(const Tensor& t, const Shape& want, const char* name) {
  if (t.shape() != want) {
    throw std::invalid_argument(fmt::format("{} has shape {}, expected {}", name, shape_string(t.shape()), shape_string(want)));
  }
}

void require_float(const Tensor& t, const char* name) {
  if (t.dtype() != DType::f32 && t.dtype() != DType::f16) throw std::invalid_argument(fmt::format("{} must be float32 or float16", name));
}

// dst[dst_offset + i] (float32) = src at a strided 3-D box; see rnn_gather.wgsl.
void record_gather(const KernelContext& k, gpu::CommandRecorder& recorder, const Tensor& src, const Tensor& dst,
                   uint32_t dst_offset, std::array<int64_t, 3> dims, std::array<int64_t, 3> strides, const char* name) {
  const int64_t total = dims[0] * dims[1] * dims[2];
  if (total == 0) return;
  const auto& pipeline = rnn_pipeline(
      k.pipelines, {"rnn/rnn_gather.wgsl", {}, {tensor_access("src", 0, src.dtype(), false)}}, "rnn_gather");
  GatherUniforms u{};
  for (int i = 0; i < 3; ++i) {
    u.dims[i] = u32(dims[i], "gather extent");
    u.strides[i] = u32(strides[i], "gather stride");
  }
  u.dims[3] = u32(total, "gather size");
  u.strides[3] = src.element_offset(k.gpu);
  u.dst_offset[0] = dst.element_offset(k.gpu) + dst_offset;
  recorder.dispatch(pipeline, {src.binding(k.gpu), dst.binding(k.gpu)}, &u, sizeof u,
                    gpu::split_workgroups((total + 255) / 256, k.gpu.limits()), name);
}

void record_zero(gpu::CommandRecorder& recorder, const Tensor& t, uint64_t first, uint64_t count) {
  recorder.clear(t.buffer(), t.byte_offset() + first * 4, count * 4);
}

RnnDims check_inputs(const RnnSpec& spec, const RnnWeights& weights, const RnnInputs& in, const RnnOutputs& out) {
  if (!in.x.defined()) throw std::invalid_argument("X is required");
  require_float(in.x, "X");
  if (in.x.rank() != 3) throw std::invalid_argument(fmt::format("X must be 3-D, got {}", shape_string(in.x.shape())));
  RnnDims d;
  d.seq = spec.layout == 0 ? in.x.shape()[0] : in.x.shape()[1];
  d.batch = spec.layout == 0 ? in.x.shape()[1] : in.x.shape()[0];
  d.input = in.x.shape()[2];
  d.hidden = spec.hidden_size;
  d.dirs = spec.num_directions();
  d.gates = gate_count(spec.cell);
  if (weights.input_size != d.input || weights.hidden_size != d.hidden || weights.directions != d.dirs) {
    throw std::invalid_argument(fmt::format("X {} does not match the weights (input size {}, {} directions)",
                                            shape_string(in.x.shape()), weights.input_size, weights.directions));
  }
  if (!spec.activations.empty() && spec.activations.size() != static_cast<size_t>(activations_per_direction(spec.cell) * d.dirs)) {
    throw std::invalid_argument(fmt::format("{} activations given, expected {}", spec.activations.size(),
                                            activations_per_direction(spec.cell) * d.dirs));
  }
  const Shape state = rnn_state_shape(spec, in.x.shape());
  if (in.sequence_lens.defined()) {
    if (in.sequence_lens.dtype() != DType::i32 && in.sequence_lens.dtype() != DType::i64) {
      throw std::invalid_argument("sequence_lens must be int32");  // (i64 is stored as i32 on the GPU)
    }
    require_shape(in.sequence_lens, {d.batch}, "sequence_lens");
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
  if (out.y_c.defined() && spec.cell != CellType::lstm) throw std::invalid_argument("Y_c is for LSTM only");
  if (d.seq == 0 || d.batch == 0 || d.hidden == 0) throw std::invalid_argument("empty sequence, batch or hidden size");
  return d;
}

// What plan_rnn needs to know of the device (and where the weights' parameters start).
// The GEMM core's options for the projection and the GEMM step: the session's GEMM tuning.
gemm::GemmOptions gemm_options(const KernelContext& k) {
  gemm::GemmOptions options;
  options.tuning = k.tuning.gemm;
  return options;
}

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

}  // namespace

int rnn_dispatches_per_step(const RnnSpec& spec) {
  return spec.cell == CellType::gru && !spec.linear_before_reset ? 2 : 1;
}

RnnWeights prepare_rnn_weights(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool,
                               const RnnSpec& spec, const Tensor& w, const Tensor& r, const Tensor& b, const Tensor& p) {
  const int64_t dirs = spec.num_directions(), hidden = spec.hidden_size, gates = gate_count(spec.cell);
  if (hidden <= 0) throw std::invalid_argument(fmt::format("hidden_size must be positive, got {}", hidden));
  if (spec.layout != 0 && spec.layout != 1) throw std::invalid_argument(fmt::format("layout must be 0 or 1, got {}", spec.layout));
  if (!spec.activations.empty() &&
      spec.activations.size() != static_cast<size_t>(activations_per_direction(spec.cell) * dirs)) {
    throw std::invalid_argument(fmt::format("{} activations given, expected {}", spec.activations.size(),
                                            activations_per_direction(spec.cell) * dirs));
  }
  if (spec.input_forget && spec.cell != CellType::lstm) throw std::invalid_argument("input_forget is for LSTM only");
  if (spec.clip && !(*spec.clip >= 0.0f)) throw std::invalid_argument("clip must be non-negative");
  if (!w.defined() || !r.defined()) throw std::invalid_argument("W and R are required");
  require_float(w, "W");
  require_float(r, "R");
  if (w.rank() != 3) throw std::invalid_argument(fmt::format("W must be 3-D, got {}", shape_string(w.shape())));
  const int64_t input = w.shape()[2];
  require_shape(w, {dirs, gates * hidden, input}, "W");
  require_shape(r, {dirs, gates * hidden, hidden}, "R");
  if (b.defined()) {
    require_float(b, "B");
    require_shape(b, {dirs, 2 * gates * hidden}, "B");
  }
  if (p.defined()) {
    if (spec.cell != CellType::lstm) throw std::invalid_argument("P (peepholes) is for LSTM only");
    require_float(p, "P");
    require_shape(p, {dirs, 3 * hidden}, "P");
  }

  RnnWeights out;
  out.input_size = input;
  out.hidden_size = hidden;
  out.directions = dirs;
  out.has_peepholes = p.defined();
  const int64_t gh = gates * hidden;
  // W^T of all directions side by side, W^T[i][d G H + n] = W[d][n][i], so one GEMM projects every
  // direction.
  out.w = w;
  out.r = r;
  out.b = b;
  out.p = p;
  out.w_t = Tensor::empty(pool, DType::f32, {input, dirs * gh});
  record_gather(k, recorder, w, out.w_t, 0, {input, dirs, gh}, {1, gh * input, input}, "rnn_transpose_w");
  const int64_t rt_size = dirs * hidden * gh;
  out.bias_offset = u32(rt_size, "R size");
  out.peephole_offset = u32(rt_size + dirs * 2 * gh, "parameter size");
  out.params = Tensor::empty(pool, DType::f32, {rt_size + dirs * 2 * gh + (p.defined() ? dirs * 3 * hidden : 0)});
  // R^T[d][k][n] = R[d][n][k].
  record_gather(k, recorder, r, out.params, 0, {dirs, hidden, gh}, {gh * hidden, 1, hidden}, "rnn_transpose_r");
  if (b.defined()) {
    record_gather(k, recorder, b, out.params, out.bias_offset, {1, dirs, 2 * gh}, {0, 2 * gh, 1}, "rnn_bias");
  } else {
    record_zero(recorder, out.params, out.bias_offset, dirs * 2 * gh);
  }
  if (p.defined()) {
    record_gather(k, recorder, p, out.params, out.peephole_offset, {1, dirs, 3 * hidden}, {0, 3 * hidden, 1}, "rnn_peepholes");
  }
  return out;
}

void record_rnn(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnSpec& spec,
                const RnnWeights& weights, const RnnInputs& in, const RnnOutputs& out, const RnnOptions& options) {
  const RnnDims d = check_inputs(spec, weights, in, out);
  // X or Y over one storage binding: chunks of time, each a smaller layer (rnn_time_chunks.h).
  if (rnn_needs_time_chunks(k, in, out)) return record_rnn_time_chunks(k, recorder, pool, spec, weights, in, out, options);
  const int64_t gh = d.gates * d.hidden;
  const int64_t dbh = d.dirs * d.batch * d.hidden;

  // State: h ping, h pong, c, then the GRU scratch r (.) H_prev and z; all float32.
  const Tensor state = Tensor::empty(pool, DType::f32, {5 * dbh});
  const uint32_t st0 = state.element_offset(k.gpu);
  // Initial states [D, B, H] (layout 1 gives [B, D, H]: permuted while widening).
  const auto init_state = [&](const Tensor& initial, int64_t offset, const char* name) {
    if (!initial.defined()) {
      record_zero(recorder, state, offset, dbh);
      return;
    }
    const int64_t h = d.hidden;
    const std::array<int64_t, 3> strides =
        spec.layout == 0 ? std::array<int64_t, 3>{d.batch * h, h, 1} : std::array<int64_t, 3>{h, d.dirs * h, 1};
    record_gather(k, recorder, initial, state, static_cast<uint32_t>(offset), {d.dirs, d.batch, h}, strides, name);
  };
  init_state(in.initial_h, 0, "rnn_initial_h");
  if (spec.cell == CellType::lstm) init_state(in.initial_c, 2 * dbh, "rnn_initial_c");

  // Projection X W^T into xw: one GEMM over all rows when it fits one binding, else per chunk of
  // timesteps (X made time-major first), one GEMM per direction and chunk.
  const uint64_t limit = options.max_projection_bytes ? options.max_projection_bytes
                                                      : k.gpu.limits().maxStorageBufferBindingSize;
  const uint64_t step_bytes = static_cast<uint64_t>(d.batch * d.dirs * gh) * 4;
  const bool chunked = step_bytes * static_cast<uint64_t>(d.seq) > limit;
  const int64_t chunk = chunked ? std::max<int64_t>(1, static_cast<int64_t>(limit / step_bytes)) : d.seq;
  const Tensor xw = Tensor::empty(pool, DType::f32, {chunk * d.batch * d.dirs * gh});

  Tensor x_time_major = in.x;
  if (chunked && spec.layout == 1) {
    x_time_major = Tensor::empty(pool, DType::f32, {d.seq, d.batch, d.input});
    record_gather(k, recorder, in.x, x_time_major, 0, {d.seq, d.batch, d.input},
                  {d.input, d.seq * d.input, 1}, "rnn_x_time_major");
  }

  // Outputs: the real tensors, or small stand-ins so every binding exists.
  const auto bind_out = [&](const Tensor& t) {
    if (t.defined()) return t;
    Tensor stand_in = Tensor::empty(pool, in.x.dtype(), {2});
    return stand_in;
  };
  const Tensor y = bind_out(out.y), yh = bind_out(out.y_h), yc = bind_out(out.y_c);
  const Tensor& lens = in.sequence_lens.defined() ? in.sequence_lens : weights.params;

  StepUniforms u{};
  u.dims[1] = u32(d.seq, "sequence length");
  u.dims[2] = u32(d.batch, "batch");
  u.dims[3] = u32(d.hidden, "hidden_size");
  uint32_t flags = 0;
  if (in.sequence_lens.defined()) flags |= kSeqLens;
  if (out.y.defined()) flags |= kY;
  if (out.y_h.defined()) flags |= kYh;
  if (out.y_c.defined()) flags |= kYc;
  if (spec.direction == Direction::reverse) flags |= kReverse0;
  if (spec.direction == Direction::bidirectional) flags |= kReverse0 << 1;
  if (spec.input_forget) flags |= kInputForget;
  if (weights.has_peepholes) flags |= kPeephole;
  if (spec.clip) flags |= kClip;
  if (spec.layout == 1) flags |= kLayout1;
  if (chunked || spec.layout == 0) flags |= kTimeMajorXw;  // xw rows t*B + b (else b*S + t)
  u.misc[0] = u32(d.dirs, "directions");
  u.misc[1] = flags;
  u.misc[2] = u32(chunked ? gh : d.dirs * gh, "projection row");
  u.misc[3] = xw.element_offset(k.gpu);
  if (chunked) {
    u.xw_base[1] = u32(chunk * d.batch * gh, "projection chunk");
  } else {
    u.xw_base[1] = u32(gh, "gates");
  }
  u.wts[0] = weights.bias_offset;
  u.wts[1] = weights.peephole_offset;
  u.wts[2] = lens.element_offset(k.gpu);
  u.outs[0] = y.element_offset(k.gpu);
  u.outs[1] = yh.element_offset(k.gpu);
  u.outs[2] = yc.element_offset(k.gpu);
  u.outs[3] = u32(st0 + 3 * dbh, "state");
  u.clip[0] = spec.clip.value_or(0.0f);
  const auto acts = spec.activations.empty() ? default_activations(spec.cell, static_cast<int>(d.dirs)) : spec.activations;
  for (size_t i = 0; i < acts.size(); ++i) {
    u.act[i][0] = static_cast<float>(static_cast<uint32_t>(acts[i].kind));
    u.act[i][1] = acts[i].alpha;
    u.act[i][2] = acts[i].beta;
  }
  const TemplateValues layer = layer_values(spec, flags, d.dirs);

  const DType out_dtype = in.x.dtype();
  const RnnDeviceFacts device = device_facts(k, weights);
  const bool on_gpu = device.gpu;
  const std::vector<gpu::BufferBinding> binding_list = {xw.binding(k.gpu), weights.params.binding(k.gpu),
                                                         state.binding(k.gpu), lens.binding(k.gpu),
                                                         y.binding(k.gpu), yh.binding(k.gpu), yc.binding(k.gpu)};
  // The probe's uniforms: probe mode, the spin bound (CPU adapters' threads may start late), the
  // exchange at element 0; binding 7, the exchange, is replaced by the probe's own buffer.
  StepUniforms probe = u;
  probe.dims[0] = 0xfffffffeu;
  probe.dims[1] = on_gpu ? (1u << 16) : (1u << 24);
  probe.st[3] = 0;
  std::vector<gpu::BufferBinding> probe_bindings = binding_list;
  probe_bindings.push_back(state.binding(k.gpu));
  const auto cooperative_pipeline = [&](const CooperativeTiling& t,
                                        bool subgroup_reduce) -> const wgpu::ComputePipeline& {
    return rnn_pipeline(k.pipelines,
                        cooperative_shader(spec, layer, t, d.hidden, subgroup_reduce, on_gpu, out_dtype),
                        "rnn_cooperative");
  };
  const auto cooperative_groups = [&](const CooperativeTiling& t) {
    return gpu::WorkgroupCount{u32((d.hidden + t.units - 1) / t.units, "unit tiles"), u32(t.row_blocks(d.batch), "row blocks"),
                               u32(d.dirs, "dirs")};
  };
  const GridResidentProbe grid_resident = [&](const CooperativeTiling& t, bool subgroup_reduce) {
    return probe_grid_resident(k, cooperative_pipeline(t, subgroup_reduce), probe_bindings, 7, &probe, sizeof probe,
                               cooperative_groups(t));
  };
  const RnnPlan plan = plan_rnn(spec, d, chunked, options, k.tuning.rnn, device, grid_resident);
  const bool two_phase = plan.two_phase;

  // One pipeline (and grid) per phase of the per-step kernels: the tiling depends on the gates in the
  // product.
  struct StepPipeline {
    const wgpu::ComputePipeline* pipeline = nullptr;
    gpu::WorkgroupCount groups;
  };
  const auto step_pipeline = [&](const RnnStepPhase& phase, const char* label) {
    StepPipeline sp;
    if (plan.kind == RnnKernelKind::vec4_step) {
      const Vec4StepTiling& t = plan.vec4;
      sp.pipeline = &rnn_pipeline(k.pipelines, vec4_step_shader(spec, layer, t, d.hidden, on_gpu, out_dtype),
                                  t.persistent ? "rnn_vec4_sequence" : label);
      sp.groups = {u32((d.hidden + t.units() - 1) / t.units(), "hidden tiles"),
                   u32((d.batch + t.rows() - 1) / t.rows(), "batch tiles"), u32(d.dirs, "dirs")};
    } else if (plan.kind == RnnKernelKind::tiled_step) {
      const TiledStepTiling& t = phase.tiled;
      sp.pipeline = &rnn_pipeline(
          k.pipelines,
          tiled_step_shader(spec, layer, phase.name.c_str(), phase.gates_in_product, t, out_dtype), label);
      sp.groups = {u32((d.hidden + t.units - 1) / t.units, "hidden tiles"), u32((d.batch + t.rows - 1) / t.rows, "batch tiles"),
                   u32(d.dirs, "dirs")};
    } else {
      const bool whole_sequence = plan.kind == RnnKernelKind::whole_sequence;
      const StepTiling& t = phase.dot;
      sp.pipeline = &rnn_pipeline(
          k.pipelines,
          step_shader(spec, layer, phase.name.c_str(), phase.gates_in_product, t, whole_sequence, out_dtype),
          label);
      sp.groups = {whole_sequence ? 1u : u32((d.hidden + t.units - 1) / t.units, "hidden tiles"),
                   u32((d.batch + t.batch_tile - 1) / t.batch_tile, "batch tiles"), u32(d.dirs, "dirs")};
    }
    return sp;
  };
  StepPipeline fused, zr, hp;
  if (two_phase && !plan.phases.empty()) {
    zr = step_pipeline(plan.phases.at(0), "rnn_step_zr");
    hp = step_pipeline(plan.phases.at(1), "rnn_step_h");
  } else if (!plan.phases.empty()) {
    fused = step_pipeline(plan.phases.at(0), plan.kind == RnnKernelKind::whole_sequence ? "rnn_sequence" : "rnn_step");
  }

  // The projection GEMM(s).
  const auto project = [&](int64_t chunk_index) {
    if (!chunked) {
      const Tensor a = in.x.reshape({d.seq * d.batch, d.input});
      gemm::GemmProblem problem;
      problem.a_shape = a.shape();
      problem.a_dtype = a.dtype();
      problem.b_shape = weights.w_t.shape();
      gemm::GemmTensors t;
      t.a = a;
      t.b = weights.w_t;
      t.out = xw.reshape({d.seq * d.batch, d.dirs * gh});
      gemm::record_gemm(k.gpu, k.pipelines, recorder, problem, t, gemm_options(k));
      return;
    }
    const int64_t s0 = chunk_index * chunk, s1 = std::min(d.seq, s0 + chunk);
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const bool reverse = spec.direction == Direction::reverse || dir == 1;
      const int64_t t0 = reverse ? d.seq - s1 : s0;
      u.xw_base[2 + dir] = static_cast<uint32_t>(t0);
      const Tensor a = x_time_major.reshape({d.seq * d.batch, d.input}).slice_outer(t0 * d.batch, (t0 + s1 - s0) * d.batch);
      // This direction's W [G H, I] as a transposed B (W^T's columns of one direction are not one
      // contiguous tensor).
      gemm::GemmProblem problem;
      problem.a_shape = a.shape();
      problem.a_dtype = a.dtype();
      problem.b_shape = {gh, d.input};
      problem.b_dtype = weights.w.dtype();
      problem.transpose_b = true;
      gemm::GemmTensors t;
      t.a = a;
      t.b = weights.w.slice_outer(dir, dir + 1).reshape({gh, d.input});
      t.out = xw.slice_outer(dir * chunk * d.batch * gh, dir * chunk * d.batch * gh + (s1 - s0) * d.batch * gh)
                  .reshape({(s1 - s0) * d.batch, gh});
      gemm::record_gemm(k.gpu, k.pipelines, recorder, problem, t, gemm_options(k));
    }
  };

  // The kernels that run every step in one dispatch: the projection of all steps first, then h
  // ping-pongs between the first two state vectors inside the kernel.
  const auto one_dispatch_sequence = [&] {
    project(0);
    u.dims[0] = 0;
    u.st[0] = st0;
    u.st[1] = st0 + static_cast<uint32_t>(dbh);
    u.st[2] = st0 + static_cast<uint32_t>(2 * dbh);
    u.st[3] = st0;
    u.wts[3] = 0;
  };
  if (plan.kind == RnnKernelKind::resident) {
    one_dispatch_sequence();
    const auto& pipeline = rnn_pipeline(
        k.pipelines, resident_shader(spec, layer, plan.resident, d.hidden, plan.subgroup_reduce, out_dtype),
        "rnn_resident");
    const gpu::WorkgroupCount groups{1, u32((d.batch + plan.resident.rows - 1) / plan.resident.rows, "row blocks"),
                                     u32(d.dirs, "dirs")};
    recorder.dispatch(pipeline, binding_list, &u, sizeof u, groups, "rnn_resident");
    return;
  }
  // The kernels whose workgroups trade h through an exchange (rnn_exchange.wgsl): every step in one
  // dispatch of `pipeline` over `groups`, which must all be resident at once.
  const auto exchange_sequence = [&](const wgpu::ComputePipeline& pipeline, gpu::WorkgroupCount groups,
                                     const char* name, const char* avoid) {
    one_dispatch_sequence();
    const uint64_t exchange_words = d.exchange_words();
    // The exchange, cleared: 0 marks an h not yet published.
    const Tensor exchange = Tensor::empty(pool, DType::f32, {static_cast<int64_t>(exchange_words)});
    recorder.clear(exchange.buffer(), exchange.byte_offset(), exchange_words * 4);
    u.st[3] = exchange.element_offset(k.gpu);
    std::vector<gpu::BufferBinding> bindings = binding_list;
    bindings.push_back(exchange.binding(k.gpu));
    recorder.dispatch(pipeline, bindings, &u, sizeof u, groups, name);
    // The flag word a wait sets when it gives up (the grid was not resident after all): a GpuError
    // when the run's owner checks its guards, not just NaN outputs.
    k.gpu.guards().guard(
        recorder, exchange.buffer(), exchange.byte_offset(),
        fmt::format("{}recurrent layer (hidden {}, {} steps, batch {}): the {} kernel's grid of {} "
                    "workgroups was not resident at once (another workload on the GPU?), its waits gave up "
                    "and the outputs are invalid; {}",
                    options.label.empty() ? "" : options.label + ": ", d.hidden, d.seq, d.batch, name,
                    uint64_t{groups.x} * groups.y * groups.z, avoid));
  };
  if (plan.kind == RnnKernelKind::cooperative) {
    exchange_sequence(cooperative_pipeline(plan.cooperative, plan.subgroup_reduce),
                      cooperative_groups(plan.cooperative), "rnn_cooperative",
                      "the tuning rnn.cooperative=0 avoids the cooperative kernel");
    return;
  }
  if (plan.kind == RnnKernelKind::vec4_step && plan.vec4.persistent) {
    if (options.probe_cooperative_grid &&
        !probe_grid_resident(k, *fused.pipeline, probe_bindings, 7, &probe, sizeof probe, fused.groups)) {
      throw std::invalid_argument(fmt::format(
          "RNN persistent vec4 step: its grid of {} workgroups of {} invocations does not run all at once on "
          "this device",
          uint64_t{fused.groups.x} * fused.groups.y * fused.groups.z, plan.vec4.workgroup_size()));
    }
    exchange_sequence(*fused.pipeline, fused.groups, "rnn_vec4_sequence",
                      "a vec4 tiling without PERSISTENT avoids it");
    return;
  }
  if (plan.kind == RnnKernelKind::row_sequence) {
    one_dispatch_sequence();
    const RowSequenceTiling& row_tiling = plan.rows;
    const auto& pipeline = rnn_pipeline(
        k.pipelines, row_sequence_shader(spec, layer, row_tiling, d.hidden, out_dtype), "rnn_rows");
    const gpu::WorkgroupCount groups{1, u32((d.batch + row_tiling.rows - 1) / row_tiling.rows, "row blocks"),
                                     u32(d.dirs, "dirs")};
    std::vector<gpu::BufferBinding> bindings = binding_list;
    if (row_tiling.unit_vector == 4) bindings.push_back(weights.params.binding(k.gpu));  // weights4
    recorder.dispatch(pipeline, bindings, &u, sizeof u, groups, "rnn_rows");
    return;
  }
  if (plan.kind == RnnKernelKind::whole_sequence) {
    one_dispatch_sequence();
    recorder.dispatch(*fused.pipeline, binding_list, &u, sizeof u, fused.groups, "rnn_sequence");
    return;
  }
  if (plan.kind == RnnKernelKind::gemm_step) {
    // gates[D, B, GT H] = H_prev[D, B, H] R^T[D, H, GT H] (R^T at the start of params, float32),
    // planned once; then the cell per (direction, row, unit).
    const int64_t gt = gate_count(spec.cell);
    const Tensor gates = Tensor::empty(pool, DType::f32, {d.dirs * d.batch * gt * d.hidden});
    const Tensor r_t = weights.params.slice_outer(0, d.dirs * d.hidden * gt * d.hidden).reshape({d.dirs, d.hidden, gt * d.hidden});
    gemm::GemmProblem problem;
    problem.a_shape = {d.dirs, d.batch, d.hidden};
    problem.b_shape = r_t.shape();
    const gemm::Gemm product(k.gpu, problem, gemm_options(k));
    const auto& cell = rnn_pipeline(k.pipelines, gates_step_shader(spec, layer, out_dtype), "rnn_step_gates");
    std::vector<gpu::BufferBinding> bindings = binding_list;
    bindings.push_back(gates.binding(k.gpu));
    const gpu::WorkgroupCount groups = gpu::split_workgroups((dbh + 255) / 256, k.gpu.limits());
    u.wts[3] = gates.element_offset(k.gpu);
    for (int64_t step = 0; step < d.seq; ++step) {
      if (step % chunk == 0) project(step / chunk);
      const int64_t h_in = (step % 2) * dbh;
      gemm::GemmTensors t;
      t.a = state.slice_outer(h_in, h_in + dbh).reshape({d.dirs, d.batch, d.hidden});
      t.b = r_t;
      t.out = gates.reshape({d.dirs, d.batch, gt * d.hidden});
      product.record(k.gpu, k.pipelines, recorder, t);
      u.dims[0] = static_cast<uint32_t>(step);
      u.st[0] = st0 + static_cast<uint32_t>(h_in);
      u.st[1] = st0 + static_cast<uint32_t>(((step + 1) % 2) * dbh);
      u.st[2] = st0 + static_cast<uint32_t>(2 * dbh);
      recorder.dispatch(cell, bindings, &u, sizeof u, groups, "rnn_step_gates");
    }
    return;
  }
  for (int64_t step = 0; step < d.seq; ++step) {
    if (step % chunk == 0) project(step / chunk);
    const uint32_t h_in = st0 + static_cast<uint32_t>((step % 2) * dbh);
    const uint32_t h_out = st0 + static_cast<uint32_t>(((step + 1) % 2) * dbh);
    u.dims[0] = static_cast<uint32_t>(step);
    u.st[0] = h_in;
    u.st[1] = h_out;
    u.st[2] = st0 + static_cast<uint32_t>(2 * dbh);
    if (two_phase) {
      u.st[3] = h_in;
      u.wts[3] = 0;
      recorder.dispatch(*zr.pipeline, binding_list, &u, sizeof u, zr.groups, "rnn_step_zr");
      u.st[3] = u.outs[3];
      u.wts[3] = u32(2 * d.hidden, "column");
      recorder.dispatch(*hp.pipeline, binding_list, &u, sizeof u, hp.groups, "rnn_step_h");
    } else {
      u.st[3] = h_in;
      u.wts[3] = 0;
      recorder.dispatch(*fused.pipeline, binding_list, &u, sizeof u, fused.groups, "rnn_step");
    }
  }
}

void record_rnn(const KernelContext& k, gpu::CommandRecorder& recorder, gpu::BufferPool& pool, const RnnSpec& spec,
                const RnnInputs& in, const RnnOutputs& out, const RnnOptions& options) {
  const RnnWeights weights = prepare_rnn_weights(k, recorder, pool, spec, in.w, in.r, in.b, in.p);
  record_rnn(k, recorder, pool, spec, weights, in, out, options);
}

}  // namespace onda::kernels::rnn
