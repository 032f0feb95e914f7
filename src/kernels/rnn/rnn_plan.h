// Which kernel runs a recurrent layer, and with which tiling: a pure function of the layer's shape,
// the caller's options, the tuning (rnn_tuning.h) and a few facts about the device. RnnKernel
// (rnn_kernel.h) asks it once when it plans a layer and then only records; tests ask it with the facts of
// adapters they do not have (an H200's, a CPU's), so the automatic choices for GPUs are checked on
// any machine.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/rnn/rnn_options.h"
#include "kernels/rnn/rnn_spec.h"
#include "kernels/rnn/rnn_step_tiling.h"
#include "kernels/rnn/rnn_tuning.h"

namespace onda::kernels::rnn {

// The layer's extents: S, B, I, H, D and the gates per unit.
struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 0, gates = 0;
  // Words of the exchange of the kernels that trade h between workgroups (rnn_exchange.wgsl): word 0
  // the "gave up" flag, then every step's h.
  uint64_t exchange_words() const { return 1 + static_cast<uint64_t>(seq * dirs * batch * hidden); }
};

// What the plan needs to know of the device.
struct RnnDeviceFacts {
  uint32_t max_invocations = 256;    // min(maxComputeInvocationsPerWorkgroup, maxComputeWorkgroupSizeX)
  uint64_t workgroup_bytes = 16384;  // maxComputeWorkgroupStorageSize
  uint64_t max_binding_bytes = 128ull << 20;  // maxStorageBufferBindingSize
  uint64_t max_buffer_bytes = 256ull << 20;   // maxBufferSize
  bool gpu = false;                           // a GPU adapter (not a CPU one such as lavapipe): the automatic
                                              // choices measured on GPUs apply
  uint32_t subgroup_min_size = 0;             // 0 without the subgroups feature
  bool params_vec4_aligned = true;  // the weights' parameter buffer starts 16-byte aligned in its binding
};

// The kernels in the order the choice tries them.
enum class RnnKernelKind {
  resident,        // rnn_sequence_resident.wgsl, one dispatch
  cooperative,     // rnn_sequence_cooperative.wgsl, one dispatch
  row_sequence,    // rnn_sequence_rows.wgsl, one dispatch
  whole_sequence,  // rnn_step.wgsl with WHOLE_SEQUENCE, one dispatch
  gemm_step,       // per step: the GEMM core, then rnn_step_gates.wgsl
  vec4_step,       // per step: rnn_step_vec4.wgsl
  tiled_step,      // per step: rnn_step_tiled.wgsl (one or two phases)
  dot_step,        // per step: rnn_step.wgsl (one or two phases)
};
const char* rnn_kernel_name(RnnKernelKind kind);

// One dispatch of a step of the vec4, tiled or dot kernel (or the whole-sequence one): the fused cell,
// or GRU (linear_before_reset=0)'s "zr" then "h" phases, with the gates in that phase's product.
struct RnnStepPhase {
  std::string name;  // "fused", "zr" or "h"
  int gates_in_product = 0;
  TiledStepTiling tiled;  // tiled_step
  StepTiling dot;         // dot_step and whole_sequence
};

struct RnnPlan {
  RnnKernelKind kind = RnnKernelKind::dot_step;
  bool two_phase = false;  // GRU with linear_before_reset=0
  // K slices summed by subgroup shuffles (resident, cooperative).
  bool subgroup_reduce = false;
  // The tiling of `kind` (only that one is meaningful).
  ResidentTiling resident;
  CooperativeTiling cooperative;
  RowSequenceTiling rows;
  Vec4StepTiling vec4;
  std::vector<RnnStepPhase> phases;  // vec4_step, tiled_step, dot_step, whole_sequence; else empty
};

// Whether the cooperative kernel's grid with tiling `t` (and that subgroup choice) runs all at once:
// RnnKernel compiles the pipeline and probes it (cooperative_probe.h).
using GridResidentProbe = std::function<bool(const CooperativeTiling& t, bool subgroup_reduce)>;

// The plan for a layer of `spec` with extents `d`, its projection chunked or not. Options first, then
// the tuning where the options leave the choice automatic, then the automatic choice for `device`.
// std::invalid_argument when a forced tiling does not fit the device or a forced cooperative kernel
// has no resident grid.
RnnPlan plan_rnn(const RnnSpec& spec, const RnnDims& d, bool chunked, const RnnOptions& options,
                 const RnnTuning& tuning, const RnnDeviceFacts& device,
                 const GridResidentProbe& grid_resident);

}  // namespace onda::kernels::rnn
