// plan_rnn (rnn_plan.h): which kernel a recurrent layer runs, asked with the facts of adapters this
// machine may not have. The H200's choices are the ones docs/benchmark-log.md measured (the reference
// models' layers); a CPU adapter keeps the kernels that need no residency or GPU tuning; options come
// before the tuning (RnnTuning), which comes before the automatic choice; every chosen tiling fits the
// device it was chosen for.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kernels/rnn/rnn_plan.h"

namespace onda::test {
namespace {

using namespace kernels::rnn;

// As Dawn reports an NVIDIA H200 (Vulkan): 1024 invocations, 48 KiB of workgroup memory, 4 GiB
// bindings, subgroups of 32.
RnnDeviceFacts h200() {
  RnnDeviceFacts f;
  f.max_invocations = 1024;
  f.workgroup_bytes = 48 * 1024;
  f.max_binding_bytes = 4ull << 30;
  f.max_buffer_bytes = 4ull << 30;
  f.gpu = true;
  f.subgroup_min_size = 32;
  return f;
}

// A CPU adapter (lavapipe) at WebGPU's default limits, no subgroups.
RnnDeviceFacts cpu() {
  RnnDeviceFacts f;
  f.gpu = false;
  return f;
}

struct LayerShape {
  const char* name;
  CellType cell;
  bool bidirectional;
  int64_t seq, batch, input, hidden;
  bool linear_before_reset = true;
};

RnnSpec spec_of(const LayerShape& l) {
  RnnSpec s;
  s.cell = l.cell;
  s.direction = l.bidirectional ? Direction::bidirectional : Direction::forward;
  s.hidden_size = l.hidden;
  s.linear_before_reset = l.linear_before_reset;
  return s;
}

RnnDims dims_of(const LayerShape& l) {
  return {l.seq, l.batch, l.input, l.hidden, l.bidirectional ? 2 : 1, gate_count(l.cell)};
}

GridResidentProbe always(bool answer) {
  return [answer](const CooperativeTiling&, bool) { return answer; };
}

RnnPlan plan(const LayerShape& l, const RnnDeviceFacts& device, const GridResidentProbe& probe = always(true),
             const RnnOptions& options = {}, const RnnTuning& tuning = {}, bool chunked = false) {
  return plan_rnn(spec_of(l), dims_of(l), chunked, options, tuning, device, probe);
}

// The reference models' layers (bench/rnn_cases.h).
const LayerShape kMpsenetFreq{"mpsenet-freq biGRU", CellType::gru, true, 321, 101, 64, 128};
const LayerShape kMpsenetLbr0{"mpsenet-freq biGRU lbr=0", CellType::gru, true, 321, 101, 64, 128, false};
const LayerShape kScnetH256Band{"scnet H256 freq biLSTM", CellType::lstm, true, 85, 864, 256, 256};
const LayerShape kScnetH512Band{"scnet H512 freq biLSTM", CellType::lstm, true, 85, 433, 512, 512};
const LayerShape kScnetH256Time{"scnet H256 time biLSTM", CellType::lstm, true, 864, 85, 256, 256};
const LayerShape kScnetH512Time{"scnet H512 time biLSTM", CellType::lstm, true, 433, 85, 512, 512};

TEST(RnnPlan, H200RunsTheMeasuredKernels) {
  struct Expect {
    LayerShape layer;
    RnnKernelKind kind;
  };
  const std::vector<Expect> table = {
      {kMpsenetFreq, RnnKernelKind::resident},
      {{"mpsenet-time biGRU", CellType::gru, true, 101, 321, 64, 128}, RnnKernelKind::resident},
      {{"issue biGRU T321 B201", CellType::gru, true, 321, 201, 64, 128}, RnnKernelKind::resident},
      {kMpsenetLbr0, RnnKernelKind::tiled_step},
      {{"biLSTM H128 T512 B64", CellType::lstm, true, 512, 64, 128, 128}, RnnKernelKind::cooperative},
      {{"biLSTM H256 T1000 B2", CellType::lstm, true, 1000, 2, 256, 256}, RnnKernelKind::cooperative},
      {{"LSTM H512 T4096 B1", CellType::lstm, false, 4096, 1, 512, 512}, RnnKernelKind::cooperative},
      {kScnetH256Band, RnnKernelKind::vec4_step},
      {kScnetH256Time, RnnKernelKind::cooperative},
      {kScnetH512Band, RnnKernelKind::gemm_step},
      {{"uvr H64 I168 biLSTM", CellType::lstm, true, 256, 1, 168, 64}, RnnKernelKind::resident},
      {{"uvr H32 I168 biLSTM", CellType::lstm, true, 256, 1, 168, 32}, RnnKernelKind::resident},
  };
  for (const Expect& e : table) {
    const RnnPlan p = plan(e.layer, h200());
    EXPECT_STREQ(rnn_kernel_name(p.kind), rnn_kernel_name(e.kind)) << e.layer.name;
  }
  // SCNet's H512 time LSTM: the H200 has no resident cooperative grid for it (docs/benchmark-log.md),
  // so the probe says no to every candidate and the vec4 step runs.
  EXPECT_EQ(plan(kScnetH512Time, h200(), always(false)).kind, RnnKernelKind::vec4_step);
  // The two-phase GRU step runs z, r first (2 gates in the product), then h (1).
  const RnnPlan lbr0 = plan(kMpsenetLbr0, h200());
  ASSERT_EQ(lbr0.phases.size(), 2u);
  EXPECT_EQ(lbr0.phases[0].name, "zr");
  EXPECT_EQ(lbr0.phases[0].gates_in_product, 2);
  EXPECT_EQ(lbr0.phases[1].name, "h");
  EXPECT_EQ(lbr0.phases[1].gates_in_product, 1);
  EXPECT_TRUE(lbr0.two_phase);
  // Subgroups of 32 sum the resident kernel's K slices of MP-SENet's GRU.
  EXPECT_TRUE(plan(kMpsenetFreq, h200()).subgroup_reduce);
}

// The streaming bench model's GRU (bench/make_streaming_model.py: one frame, batch 1, hidden 256,
// input 256, linear_before_reset=1): R^T is 768 KiB, past the resident kernel's registers, so on a
// GPU the cooperative kernel runs the frame's step, R^T spread over 8 workgroups of 32 units x 8 K
// slices (summed by subgroup shuffles); on a CPU adapter the dot step kernel. Either is one dispatch
// after the projection GEMM.
TEST(RnnPlan, StreamingGruFrame) {
  const LayerShape frame{"streaming GRU frame", CellType::gru, false, 1, 1, 256, 256};
  const RnnPlan gpu = plan(frame, h200());
  ASSERT_EQ(gpu.kind, RnnKernelKind::cooperative);
  EXPECT_EQ(gpu.cooperative.units, 32u);
  EXPECT_EQ(gpu.cooperative.slice_vectors, 8u);
  EXPECT_EQ(gpu.cooperative.workgroups(1, 256, 1), 8);
  EXPECT_TRUE(gpu.subgroup_reduce);
  EXPECT_EQ(plan(frame, cpu()).kind, RnnKernelKind::dot_step);
}

// On CPU adapters (lavapipe measurements, kCpuGemmStepMinBatch): the resident kernel wherever R^T
// fits, whatever the grid; else the GEMM step from batch 16; else the dot kernel. Never the tiled,
// vec4, row-sequence or cooperative kernels.
TEST(RnnPlan, CpuAdapterChoosesResidentThenGemmStepThenDot) {
  const LayerShape small_r{"LSTM H32", CellType::lstm, true, 20, 3, 8, 32};  // R^T 16 KiB a direction
  EXPECT_EQ(plan(small_r, cpu()).kind, RnnKernelKind::resident);
  const LayerShape wide{"LSTM H128 B64", CellType::lstm, true, 20, 64, 8, 128};  // R^T 256 KiB
  EXPECT_EQ(plan(wide, cpu()).kind, RnnKernelKind::gemm_step);
  const LayerShape narrow{"LSTM H128 B4", CellType::lstm, true, 20, 4, 8, 128};
  EXPECT_EQ(plan(narrow, cpu()).kind, RnnKernelKind::dot_step);
  const LayerShape two_phase{"GRU lbr=0 H128 B101", CellType::gru, true, 20, 101, 64, 128, false};
  EXPECT_EQ(plan(two_phase, cpu()).kind, RnnKernelKind::dot_step);
  // The probe is not even asked: no cooperative kernel without being asked for on CPUs.
  const GridResidentProbe never = [](const CooperativeTiling&, bool) -> bool {
    ADD_FAILURE() << "probed on a CPU adapter";
    return false;
  };
  EXPECT_EQ(plan(kMpsenetFreq, cpu(), never).kind, RnnKernelKind::resident);
  for (const LayerShape& l : {kScnetH256Band, kScnetH512Band, kScnetH256Time, kScnetH512Time})
    EXPECT_EQ(plan(l, cpu(), never).kind, RnnKernelKind::gemm_step) << l.name;
}

TEST(RnnPlan, ChunkedProjectionsRunPerStep) {
  // The one-dispatch kernels read every step's projection up front.
  const RnnPlan p = plan(kMpsenetFreq, h200(), always(true), {}, {}, /*chunked=*/true);
  EXPECT_EQ(p.kind, RnnKernelKind::vec4_step);
  EXPECT_EQ(plan(kScnetH256Time, h200(), always(true), {}, {}, true).kind, RnnKernelKind::vec4_step);
}

TEST(RnnPlan, OptionsComeBeforeOverridesBeforeTheAutomaticChoice) {
  RnnOptions options;
  RnnTuning tuning;
  tuning.step_kernel = StepKernel::gemm;
  EXPECT_EQ(plan(kScnetH256Band, h200(), always(true), options, tuning).kind, RnnKernelKind::gemm_step);
  options.step_kernel = StepKernel::tiled;
  EXPECT_EQ(plan(kScnetH256Band, h200(), always(true), options, tuning).kind, RnnKernelKind::tiled_step);
  options.step_kernel = StepKernel::dot;
  EXPECT_EQ(plan(kScnetH256Band, h200(), always(true), options, tuning).kind, RnnKernelKind::dot_step);

  // rnn.resident=0: MP-SENet's GRU (R^T 192 KiB, 202 rows) goes to the row-sequence kernel; with
  // rnn.rows=0 too, to the vec4 step.
  RnnTuning off;
  off.resident_off = true;
  EXPECT_EQ(plan(kMpsenetFreq, h200(), always(true), {}, off).kind, RnnKernelKind::row_sequence);
  off.rows_off = true;
  EXPECT_EQ(plan(kMpsenetFreq, h200(), always(true), {}, off).kind, RnnKernelKind::vec4_step);
  // The tuned tilings of one-dispatch kernels apply in the automatic mode only.
  RnnOptions per_step;
  per_step.step_mode = StepMode::per_step;
  RnnTuning resident;
  resident.resident = ResidentTiling{1, 8};
  EXPECT_EQ(plan(kMpsenetFreq, h200(), always(true), per_step, resident).kind, RnnKernelKind::vec4_step);
  const LayerShape small_r{"LSTM H32", CellType::lstm, true, 20, 3, 8, 32};  // else whole_sequence
  EXPECT_EQ(plan(small_r, cpu(), always(true), {}, resident).kind, RnnKernelKind::resident);

  // A mode asks for its kernel on any adapter.
  RnnOptions whole;
  whole.step_mode = StepMode::whole_sequence;
  EXPECT_EQ(plan(kScnetH512Band, cpu(), always(true), whole).kind, RnnKernelKind::whole_sequence);
  RnnOptions cooperative;
  cooperative.step_mode = StepMode::cooperative;
  const LayerShape small{"LSTM H64 B3", CellType::lstm, true, 10, 3, 8, 64};
  EXPECT_EQ(plan(small, cpu(), always(true), cooperative).kind, RnnKernelKind::cooperative);

  // Given tilings reach the plan unchanged.
  RnnOptions vec4;
  vec4.step_kernel = StepKernel::vec4;
  vec4.vec4_tiling = Vec4StepTiling{8, 8, 4, 1, 8, 2, false};
  const RnnPlan p = plan(kScnetH256Band, cpu(), always(true), vec4);
  EXPECT_EQ(p.kind, RnnKernelKind::vec4_step);
  EXPECT_EQ(p.vec4.wg_x, 8u);
  EXPECT_EQ(p.vec4.k_split, 2u);
  EXPECT_FALSE(p.vec4.prefetch);
}

TEST(RnnPlan, ForcedChoicesThatCannotRunSayWhy) {
  // The error `layer` planned with `options` (probe answering `resident`) gives contains `needle`.
  const auto expect_error = [](const LayerShape& layer, const RnnOptions& options, bool resident,
                               const char* needle) {
    const std::string message =
        invalid_argument_message([&] { plan(layer, h200(), always(resident), options); });
    EXPECT_NE(message.find(needle), std::string::npos) << message;
  };
  RnnOptions vec4;
  vec4.step_kernel = StepKernel::vec4;
  vec4.vec4_tiling = Vec4StepTiling{64, 64, 4, 1, 16, 1, true};  // 4096 invocations
  expect_error(kScnetH256Band, vec4, true, "vec4 step WGX=64 WGY=64");
  RnnOptions resident;
  resident.resident_tiling = ResidentTiling{64, 1};  // more rows than K slices
  expect_error(kMpsenetFreq, resident, true, "resident tiling BM=64");
  RnnOptions cooperative;
  cooperative.step_mode = StepMode::cooperative;
  expect_error(kScnetH256Time, cooperative, false, "no tiling's grid");
  // A malformed cooperative tiling is refused on a GPU too, where the automatic rule would otherwise
  // have taken the resident kernel for this small R (an H100 ran the resident kernel instead).
  RnnOptions malformed;
  malformed.cooperative_tiling = CooperativeTiling{0, 1, 1, 1};
  expect_error(kMpsenetFreq, malformed, true, "cooperative tiling JT=0");
  RnnOptions persistent;
  persistent.step_kernel = StepKernel::vec4;
  persistent.vec4_tiling = Vec4StepTiling{16, 16, 8, 2, 16, 1, true, false, true};
  EXPECT_NE(invalid_argument_message([&] {
              plan_rnn(spec_of(kScnetH256Band), dims_of(kScnetH256Band), /*chunked=*/true, persistent, {}, h200(),
                       always(true));
            }).find("persistent vec4 step"),
            std::string::npos);
  EXPECT_TRUE(plan(kScnetH256Band, h200(), always(true), persistent).vec4.persistent);
  RnnOptions tiled;
  tiled.step_kernel = StepKernel::tiled;
  tiled.tiled_tiling = TiledStepTiling{};
  tiled.tiled_tiling->k_split = 0;
  expect_error(kScnetH256Band, tiled, true, "tiled step");
}

TEST(RnnPlan, CooperativeCandidatesAreProbedBestFirst) {
  std::vector<CooperativeTiling> asked;
  const GridResidentProbe second_only = [&](const CooperativeTiling& t, bool) {
    asked.push_back(t);
    return asked.size() == 2;
  };
  const RnnPlan p = plan(kScnetH256Time, h200(), second_only);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(p.kind, RnnKernelKind::cooperative);
  EXPECT_EQ(p.cooperative.units, asked[1].units);
  EXPECT_EQ(p.cooperative.slice_vectors, asked[1].slice_vectors);
  EXPECT_EQ(p.cooperative.rows, asked[1].rows);
  // Without the probe the first candidate that fits runs.
  RnnOptions unprobed;
  unprobed.probe_cooperative_grid = false;
  const GridResidentProbe never = [](const CooperativeTiling&, bool) -> bool {
    ADD_FAILURE() << "probed with probe_cooperative_grid = false";
    return false;
  };
  EXPECT_EQ(plan(kScnetH256Time, h200(), never, unprobed).kind, RnnKernelKind::cooperative);
}

// Every plan's tiling fits the device it was made for, over shapes around every threshold.
TEST(RnnPlan, ChosenTilingsFitTheirDevice) {
  int plans = 0;
  for (const RnnDeviceFacts& device : {h200(), cpu()}) {
    for (CellType cell : {CellType::lstm, CellType::gru, CellType::rnn}) {
      for (bool lbr : {true, false}) {
        for (int64_t batch : {1, 2, 15, 16, 31, 32, 85, 128, 129, 255, 256, 433, 864}) {
          for (int64_t hidden : {1, 7, 32, 64, 100, 128, 256, 511, 512, 1024}) {
            const LayerShape l{"sweep", cell, true, 50, batch, 16, hidden, lbr};
            const RnnPlan p = plan(l, device);
            const uint32_t g = static_cast<uint32_t>(gate_count(cell));
            ++plans;
            const std::string what = std::string(rnn_kernel_name(p.kind)) + " B" + std::to_string(batch) +
                                     " H" + std::to_string(hidden) + " G" + std::to_string(g);
            switch (p.kind) {
              case RnnKernelKind::resident:
                EXPECT_LE(p.resident.workgroup_size(hidden), device.max_invocations) << what;
                EXPECT_LE(p.resident.workgroup_bytes(hidden, g, p.subgroup_reduce), device.workgroup_bytes)
                    << what;
                break;
              case RnnKernelKind::cooperative:
                EXPECT_LE(p.cooperative.workgroup_size(hidden), device.max_invocations) << what;
                EXPECT_LE(p.cooperative.workgroup_bytes(hidden, g, p.subgroup_reduce), device.workgroup_bytes)
                    << what;
                EXPECT_LE(p.cooperative.workgroups(batch, hidden, 2), kCooperativeMaxWorkgroups) << what;
                break;
              case RnnKernelKind::row_sequence:
                EXPECT_LE(p.rows.workgroup_size(hidden), device.max_invocations) << what;
                EXPECT_LE(p.rows.workgroup_bytes(hidden, g), device.workgroup_bytes) << what;
                break;
              case RnnKernelKind::vec4_step:
                EXPECT_LE(g, 4u) << what;
                EXPECT_LE(p.vec4.workgroup_size(), device.max_invocations) << what;
                EXPECT_LE(p.vec4.workgroup_bytes(), device.workgroup_bytes) << what;
                break;
              case RnnKernelKind::gemm_step:
                EXPECT_FALSE(p.two_phase) << what;
                break;
              case RnnKernelKind::tiled_step:
                ASSERT_FALSE(p.phases.empty()) << what;
                for (const RnnStepPhase& phase : p.phases) {
                  const uint32_t pg = static_cast<uint32_t>(phase.gates_in_product);
                  EXPECT_LE(phase.tiled.workgroup_size(), device.max_invocations) << what;
                  EXPECT_LE(phase.tiled.workgroup_bytes(pg), device.workgroup_bytes) << what;
                }
                break;
              case RnnKernelKind::whole_sequence:
              case RnnKernelKind::dot_step:
                ASSERT_FALSE(p.phases.empty()) << what;
                for (const RnnStepPhase& phase : p.phases) {
                  const uint32_t pg = static_cast<uint32_t>(phase.gates_in_product);
                  EXPECT_LE(phase.dot.workgroup_size(), device.max_invocations) << what;
                  EXPECT_LE(phase.dot.workgroup_bytes(pg), device.workgroup_bytes) << what;
                }
                break;
            }
            // One-dispatch kernels only where the step is one fused kernel.
            if (p.two_phase) {
              EXPECT_TRUE(p.kind == RnnKernelKind::tiled_step || p.kind == RnnKernelKind::dot_step) << what;
              EXPECT_EQ(p.phases.size(), 2u) << what;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(plans, 2 * 3 * 2 * 13 * 10);
}

}  // namespace
}  // namespace onda::test
