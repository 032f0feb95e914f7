#include "kernels/rnn/rnn_plan.h"

#include <fmt/format.h>

#include <stdexcept>

namespace onda::kernels::rnn {

const char* rnn_kernel_name(RnnKernelKind kind) {
  switch (kind) {
    case RnnKernelKind::resident:
      return "resident";
    case RnnKernelKind::cooperative:
      return "cooperative";
    case RnnKernelKind::row_sequence:
      return "row_sequence";
    case RnnKernelKind::whole_sequence:
      return "whole_sequence";
    case RnnKernelKind::gemm_step:
      return "gemm_step";
    case RnnKernelKind::vec4_step:
      return "vec4_step";
    case RnnKernelKind::tiled_step:
      return "tiled_step";
    case RnnKernelKind::dot_step:
      return "dot_step";
  }
  return "?";
}

namespace {

// Everything the choices below share: the layer, the caller's wishes and the device.
struct PlanInputs {
  const RnnDims& d;
  const RnnOptions& options;
  const RnnTuning& tuning;
  const RnnDeviceFacts& device;
  bool chunked;  // the projection computed per chunk of steps
  bool automatic() const { return options.step_mode == StepMode::automatic; }
  // Bytes of one direction's R^T (float32).
  uint64_t weight_bytes() const { return static_cast<uint64_t>(d.gates * d.hidden * d.hidden) * 4; }
  uint32_t gates() const { return static_cast<uint32_t>(d.gates); }
  // The exchange (RnnDims::exchange_words) within one binding and one buffer.
  bool exchange_fits() const {
    return d.exchange_words() * 4 <= std::min(device.max_binding_bytes, device.max_buffer_bytes);
  }
};

// A one-dispatch kernel's tiling as asked for: the option's, else (automatic mode only) the
// tuning's; `off` when the tuning turned the kernel's automatic choice off.
template <class T>
struct AskedTiling {
  std::optional<T> tiling;
  bool off = false;
};
template <class T>
AskedTiling<T> asked_tiling(const PlanInputs& in, const std::optional<T>& option,
                            const std::optional<T>& tuned, bool tuned_off) {
  if (option || !in.automatic()) return {option, false};
  return {tuned, tuned_off};
}

// The resident kernel: asked for (mode or tiling), or automatic on GPUs for an R^T that fits the
// registers. Sets plan.resident and plan.subgroup_reduce when it runs.
bool choose_resident(const PlanInputs& in, bool eligible, RnnPlan& plan) {
  const RnnDims& d = in.d;
  const RnnDeviceFacts& dev = in.device;
  auto [tiling, disabled] =
      asked_tiling(in, in.options.resident_tiling, in.tuning.resident, in.tuning.resident_off);
  const bool given = tiling.has_value();
  const bool forced = in.options.step_mode == StepMode::resident || given;
  if (!tiling) tiling = choose_resident_tiling(d.batch, d.hidden, d.dirs, in.gates(), dev.max_invocations);
  const bool subgroup_reduce = in.options.allow_subgroups && dev.subgroup_min_size > 0 &&
                               dev.subgroup_min_size >= tiling->slices(d.hidden);
  const bool fits = tiling->well_formed(d.hidden) &&
                    tiling->workgroup_size(d.hidden) <= dev.max_invocations &&
                    tiling->workgroup_bytes(d.hidden, in.gates(), subgroup_reduce) <= dev.workgroup_bytes;
  if (given && !fits) {
    throw std::invalid_argument(
        fmt::format("RNN resident tiling BM={} KQ={} does not fit the device (hidden {})", tiling->rows,
                    tiling->slice_vectors, d.hidden));
  }
  const int64_t row_blocks = (d.batch + tiling->rows - 1) / tiling->rows;
  // A tiling asked for another one-dispatch kernel is that kernel's request: it runs (or is refused
  // with its reason) instead of the resident kernel the automatic rule would pick on a GPU.
  const bool other_asked =
      asked_tiling(in, in.options.cooperative_tiling, in.tuning.cooperative, in.tuning.cooperative_off).tiling ||
      asked_tiling(in, in.options.row_tiling, in.tuning.rows, in.tuning.rows_off).tiling;
  const bool chosen =
      eligible && fits &&
      (forced || (in.automatic() && !disabled && !other_asked && in.weight_bytes() <= kResidentMaxWeightBytes &&
                  (!dev.gpu || row_blocks * d.dirs <= kResidentMaxWorkgroups)));
  if (chosen) {
    plan.resident = *tiling;
    plan.subgroup_reduce = subgroup_reduce;
  }
  return chosen;
}

// The cooperative kernel: asked for, or automatic on GPUs for batches whose R^T exceeds the resident
// kernel's registers; the first candidate tiling whose grid `grid_resident` finds resident all at once.
bool choose_cooperative(const PlanInputs& in, bool eligible, const GridResidentProbe& grid_resident,
                        RnnPlan& plan) {
  const RnnDims& d = in.d;
  const RnnDeviceFacts& dev = in.device;
  const auto [given, disabled] =
      asked_tiling(in, in.options.cooperative_tiling, in.tuning.cooperative, in.tuning.cooperative_off);
  const bool forced = in.options.step_mode == StepMode::cooperative || given;
  const bool subgroups_usable = in.options.allow_subgroups && dev.subgroup_min_size > 0;
  const uint64_t exchange_words = d.exchange_words();
  const auto subgroup_reduce = [&](const CooperativeTiling& t) {
    return subgroups_usable && dev.subgroup_min_size >= t.slices(d.hidden);
  };
  const auto fits = [&](const CooperativeTiling& t) {
    return t.well_formed(d.hidden) && t.workgroup_size(d.hidden) <= dev.max_invocations &&
           t.workgroup_bytes(d.hidden, in.gates(), subgroup_reduce(t)) <= dev.workgroup_bytes &&
           in.exchange_fits();
  };
  if (given && !fits(*given)) {
    throw std::invalid_argument(fmt::format(
        "RNN cooperative tiling JT={} BM={} KQ={} RC={} does not fit the device (hidden {}, exchange {} "
        "bytes)",
        given->units, given->rows, given->slice_vectors, given->row_chunks, d.hidden, exchange_words * 4));
  }
  const bool wanted =
      eligible &&
      (forced || (in.automatic() && !disabled && dev.gpu && in.weight_bytes() > kResidentMaxWeightBytes &&
                  d.batch <= kCooperativeMaxBatch && exchange_words * 4 <= kCooperativeMaxExchangeBytes));
  if (!wanted) return false;
  const std::vector<CooperativeTiling> candidates =
      given ? std::vector<CooperativeTiling>{*given}
            : cooperative_tiling_candidates(d.batch, d.hidden, dev.max_invocations,
                                            subgroups_usable ? dev.subgroup_min_size : 0);
  for (const CooperativeTiling& t : candidates) {
    if (!fits(t) || (!forced && t.workgroups(d.batch, d.hidden, d.dirs) > kCooperativeMaxWorkgroups))
      continue;
    if (!in.options.probe_cooperative_grid || grid_resident(t, subgroup_reduce(t))) {
      plan.cooperative = t;
      plan.subgroup_reduce = subgroup_reduce(t);
      return true;
    }
  }
  if (forced) {
    throw std::invalid_argument(
        fmt::format("RNN cooperative kernel: no tiling's grid runs all at once on this device (the first: {} "
                    "workgroups of {} "
                    "invocations)",
                    candidates.front().workgroups(d.batch, d.hidden, d.dirs),
                    candidates.front().workgroup_size(d.hidden)));
  }
  return false;
}

// The row-sequence kernel: asked for, or automatic on GPUs for an R^T of 64 KiB .. 1 MiB and up to
// kRowSequenceMaxRows rows; where it fits the device.
bool choose_row_sequence(const PlanInputs& in, bool eligible, bool whole_sequence, RnnPlan& plan) {
  const RnnDims& d = in.d;
  const RnnDeviceFacts& dev = in.device;
  auto [tiling, disabled] = asked_tiling(in, in.options.row_tiling, in.tuning.rows, in.tuning.rows_off);
  const bool given = tiling.has_value();
  const bool forced = in.options.step_mode == StepMode::row_sequence || given;
  if (!tiling) {
    tiling = choose_row_sequence_tiling(d.batch, d.hidden, d.dirs, in.gates(), dev.workgroup_bytes,
                                        dev.max_invocations);
  }
  // vec4 reads of R^T need it 16-byte aligned in its binding.
  const bool fits = tiling->well_formed(d.hidden) &&
                    tiling->workgroup_size(d.hidden) <= dev.max_invocations &&
                    tiling->workgroup_bytes(d.hidden, in.gates()) <= dev.workgroup_bytes &&
                    (tiling->unit_vector == 1 || dev.params_vec4_aligned);
  if (forced && given && !fits) {
    throw std::invalid_argument(fmt::format(
        "RNN row-sequence tiling BM={} TM={} UV={} KS={} KB={} does not fit the device", tiling->rows,
        tiling->thread_rows, tiling->unit_vector, tiling->k_split, tiling->k_block));
  }
  const StepMode mode = in.options.step_mode;
  const bool chosen = eligible && fits && mode != StepMode::per_step && mode != StepMode::whole_sequence &&
                      mode != StepMode::resident && mode != StepMode::cooperative &&
                      (forced || (!disabled && !whole_sequence && dev.gpu &&
                                  in.weight_bytes() <= kRowSequenceMaxWeightBytes &&
                                  d.batch * d.dirs <= kRowSequenceMaxRows));
  if (chosen) plan.rows = *tiling;
  return chosen;
}

// The vec4 step's tiling: given, else chosen by batch; std::invalid_argument when it does not fit.
Vec4StepTiling vec4_tiling(const PlanInputs& in) {
  const RnnDeviceFacts& dev = in.device;
  const std::optional<Vec4StepTiling> forced =
      in.options.vec4_tiling ? in.options.vec4_tiling : in.tuning.vec4;
  const Vec4StepTiling t =
      forced ? *forced : choose_vec4_step_tiling(in.d.batch, dev.workgroup_bytes, dev.max_invocations);
  if (!t.well_formed() || t.workgroup_size() > dev.max_invocations ||
      t.workgroup_bytes() > dev.workgroup_bytes) {
    throw std::invalid_argument(
        fmt::format("RNN vec4 step WGX={} WGY={} TM={} NV={} BK={} KS={} does not fit the device", t.wg_x,
                    t.wg_y, t.thread_rows, t.thread_units, t.k_tile, t.k_split));
  }
  if (t.persistent) {
    const uint64_t exchange_bytes = 4 * in.d.exchange_words();
    if (in.chunked || !in.exchange_fits()) {
      throw std::invalid_argument(fmt::format(
          "RNN persistent vec4 step: needs the projection of every step at once and an exchange of {} bytes "
          "in one binding{}",
          exchange_bytes,
          in.chunked ? " (the projection is chunked here)" : " (more than the device allows)"));
    }
  }
  return t;
}

// The tiled step's tiling for a phase with `g` gates in its product.
TiledStepTiling tiled_tiling(const PlanInputs& in, uint32_t g) {
  const RnnDims& d = in.d;
  const RnnDeviceFacts& dev = in.device;
  const std::optional<TiledStepTiling> forced =
      in.options.tiled_tiling ? in.options.tiled_tiling : in.tuning.tiled;
  const TiledStepTiling t = forced ? *forced
                                   : choose_tiled_step_tiling(d.batch, d.hidden, d.dirs, g,
                                                              dev.workgroup_bytes, dev.max_invocations);
  if (!t.well_formed() || t.workgroup_size() > dev.max_invocations ||
      t.workgroup_bytes(g) > dev.workgroup_bytes) {
    throw std::invalid_argument(
        fmt::format("RNN tiled step BM={} TM={} BU={} TU={} KT={} KS={} does not fit the device", t.rows,
                    t.thread_rows, t.units, t.thread_units, t.k_tile, t.k_split));
  }
  return t;
}

// The dot kernel's tiling for a phase with `g` gates in its product (whole_sequence: the widest tile).
StepTiling dot_tiling(const PlanInputs& in, uint32_t g, bool whole_sequence) {
  const RnnDims& d = in.d;
  const RnnDeviceFacts& dev = in.device;
  const StepTiling t =
      in.options.step_tiling
          ? *in.options.step_tiling
          : choose_step_tiling(d.batch, d.hidden, d.dirs, g, dev.workgroup_bytes, dev.max_invocations,
                               whole_sequence || !dev.gpu ? 1 : kGpuTargetWorkgroups);
  if (t.units == 0 || t.k_split == 0 || (t.k_split & (t.k_split - 1)) != 0 || t.batch_tile == 0 ||
      t.k_chunk == 0 || t.workgroup_size() > dev.max_invocations ||
      t.workgroup_bytes(g) > dev.workgroup_bytes) {
    throw std::invalid_argument(fmt::format("RNN step tiling JT={} KS={} BT={} KC={} does not fit the device",
                                            t.units, t.k_split, t.batch_tile, t.k_chunk));
  }
  return t;
}

}  // namespace

RnnPlan plan_rnn(const RnnSpec& spec, const RnnDims& d, bool chunked, const RnnOptions& options,
                 const RnnTuning& tuning, const RnnDeviceFacts& device,
                 const GridResidentProbe& grid_resident) {
  const PlanInputs in{d, options, tuning, device, chunked};
  RnnPlan plan;
  plan.two_phase = rnn_dispatches_per_step(spec) == 2;
  // The one-dispatch kernels need the fused cell and every step's projection up front.
  const bool one_dispatch = !plan.two_phase && !chunked;
  if (choose_resident(in, one_dispatch, plan)) {
    plan.kind = RnnKernelKind::resident;
    return plan;
  }
  if (choose_cooperative(in, one_dispatch, grid_resident, plan)) {
    plan.kind = RnnKernelKind::cooperative;
    return plan;
  }
  const bool whole_sequence =
      one_dispatch && (options.step_mode == StepMode::whole_sequence ||
                       (in.automatic() && in.weight_bytes() <= kWholeSequenceMaxWeightBytes));
  if (choose_row_sequence(in, one_dispatch, whole_sequence, plan)) {
    plan.kind = RnnKernelKind::row_sequence;
    return plan;
  }
  if (whole_sequence) {
    plan.kind = RnnKernelKind::whole_sequence;
    plan.phases.push_back({"fused", static_cast<int>(d.gates), {}, dot_tiling(in, in.gates(), true)});
    return plan;
  }
  const StepKernel kernel =
      options.step_kernel != StepKernel::automatic ? options.step_kernel : tuning.step_kernel;
  const bool automatic_gpu = kernel == StepKernel::automatic && device.gpu;
  const bool automatic_cpu = kernel == StepKernel::automatic && !device.gpu;
  // The vec4 step: asked for, or automatic on GPUs for medium batches (fused phase, G <= 4).
  if (!plan.two_phase && d.gates <= 4 &&
      (kernel == StepKernel::vec4 || (automatic_gpu && d.batch >= kVec4StepMinBatch &&
                                      (d.batch < kGemmStepMinBatch || d.hidden < kGemmStepMinHidden)))) {
    plan.kind = RnnKernelKind::vec4_step;
    plan.vec4 = vec4_tiling(in);
    plan.phases.push_back({"fused", static_cast<int>(d.gates), {}, {}});
    return plan;
  }
  // The GEMM step: its gates buffer (and the batched GEMM's operands) must fit one binding.
  const bool gates_fit =
      static_cast<uint64_t>(d.dirs * d.batch * d.gates * d.hidden) * 4 <= device.max_binding_bytes;
  if (!plan.two_phase && gates_fit &&
      (kernel == StepKernel::gemm || (automatic_gpu && d.batch >= kGemmStepMinBatch) ||
       (automatic_cpu && d.batch >= kCpuGemmStepMinBatch))) {
    plan.kind = RnnKernelKind::gemm_step;
    return plan;
  }
  const bool tiled = kernel == StepKernel::tiled || kernel == StepKernel::gemm ||
                     (automatic_gpu && d.batch >= kTiledMinBatch);
  plan.kind = tiled ? RnnKernelKind::tiled_step : RnnKernelKind::dot_step;
  const auto phase = [&](const char* name, int gates) {
    RnnStepPhase p{name, gates, {}, {}};
    if (tiled) {
      p.tiled = tiled_tiling(in, static_cast<uint32_t>(gates));
    } else {
      p.dot = dot_tiling(in, static_cast<uint32_t>(gates), false);
    }
    plan.phases.push_back(p);
  };
  if (plan.two_phase) {
    phase("zr", 2);
    phase("h", 1);
  } else {
    phase("fused", static_cast<int>(d.gates));
  }
  return plan;
}

}  // namespace onda::kernels::rnn
