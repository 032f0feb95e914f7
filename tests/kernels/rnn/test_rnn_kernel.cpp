// The recurrent kernel (LSTM, GRU, RNN) against the float64 ONNX reference (test_rnn_reference.h)
// on fresh random inputs: both layouts, every direction, ragged sequence_lens, initial states,
// peepholes, clip, input_forget, linear_before_reset 0/1, every activation, f16, several hidden /
// batch tiles, and the chunked projection fallback. Outputs are poisoned before each run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "expect_error.h"
#include "gpu/command_recorder.h"
#include "gpu/gpu_error.h"
#include "gpu/run_guards.h"
#include "harness.h"
#include "ops/onnx_vocabulary.h"
#include "kernels/rnn/rnn_kernel.h"
#include "test_rnn_reference.h"

namespace onda::test {
namespace {

using kernels::rnn::Activation;
using kernels::rnn::ActivationSpec;
using kernels::rnn::CellType;
using kernels::rnn::Direction;
using kernels::rnn::RnnSpec;

struct RnnCase {
  CellType cell = CellType::lstm;
  Direction direction = Direction::forward;
  int64_t layout = 0;
  int64_t seq = 4, batch = 2, input = 5, hidden = 6;
  DType dtype = DType::f32;
  bool bias = true, lens = false, h0 = false, c0 = false, peepholes = false, input_forget = false;
  bool linear_before_reset = false;
  std::optional<float> clip;
  bool random_activations = false;
  uint64_t max_projection_bytes = 0;
  std::optional<kernels::rnn::StepTiling> tiling;  // unset: choose_step_tiling
  kernels::rnn::StepMode mode = kernels::rnn::StepMode::automatic;
  kernels::rnn::StepKernel kernel = kernels::rnn::StepKernel::automatic;
  std::optional<kernels::rnn::TiledStepTiling> tiled;  // unset: choose_tiled_step_tiling
  std::optional<kernels::rnn::Vec4StepTiling> vec4;    // unset: choose_vec4_step_tiling
  std::optional<kernels::rnn::RowSequenceTiling> rows;  // unset: choose_row_sequence_tiling
  std::optional<kernels::rnn::ResidentTiling> resident;  // unset: choose_resident_tiling
  std::optional<kernels::rnn::CooperativeTiling> coop;  // unset: cooperative_tiling_candidates
  bool allow_subgroups = true;
  bool probe_cooperative_grid = true;
  bool want_y = true, want_yh = true, want_yc = true;
  kernels::gemm::Activation y_activation = kernels::gemm::Activation::none;  // at Y's store
  float y_activation_alpha = 0.01f;
};

std::string describe(const RnnCase& c) {
  const char* cells[] = {"LSTM", "GRU", "RNN"};
  const char* dirs[] = {"forward", "reverse", "bidirectional"};
  const std::string tiling = c.tiling ? fmt::format(" tiling JT={} KS={} BT={} KC={}", c.tiling->units, c.tiling->k_split,
                                                    c.tiling->batch_tile, c.tiling->k_chunk)
                                      : "";
  const char* modes[] = {"", " per_step", " whole_sequence", " row_sequence", " resident", " cooperative"};
  std::string kernel = c.kernel == kernels::rnn::StepKernel::tiled ? " tiled"
                       : c.kernel == kernels::rnn::StepKernel::dot ? " dot"
                       : c.kernel == kernels::rnn::StepKernel::gemm ? " gemm"
                       : c.kernel == kernels::rnn::StepKernel::vec4 ? " vec4"
                                                                    : "";
  if (c.vec4) {
    kernel += fmt::format(" WGX={} WGY={} TM={} NV={} BK={} KS={}{}", c.vec4->wg_x, c.vec4->wg_y, c.vec4->thread_rows,
                          c.vec4->thread_units, c.vec4->k_tile, c.vec4->k_split,
                          c.vec4->double_buffer ? " double-buffered" : c.vec4->prefetch ? "" : " no-prefetch");
    if (c.vec4->persistent) kernel += " persistent";
  }
  if (c.rows) {
    kernel += fmt::format(" rows BM={} TM={} UV={} KS={} KB={}", c.rows->rows, c.rows->thread_rows, c.rows->unit_vector,
                          c.rows->k_split, c.rows->k_block);
  }
  if (c.resident) kernel += fmt::format(" BM={} KQ={}", c.resident->rows, c.resident->slice_vectors);
  if (c.coop) {
    kernel += fmt::format(" JT={} BM={} KQ={} RC={}", c.coop->units, c.coop->rows, c.coop->slice_vectors, c.coop->row_chunks);
  }
  if (!c.allow_subgroups) kernel += " no-subgroups";
  if (c.tiled) {
    kernel += fmt::format(" BM={} TM={} BU={} TU={} KT={} KS={}", c.tiled->rows, c.tiled->thread_rows, c.tiled->units,
                          c.tiled->thread_units, c.tiled->k_tile, c.tiled->k_split);
  }
  return fmt::format("{} {} layout={} S={} B={} I={} H={} {}{}{}{}{}{}{}{}{}{}{}{}{}", cells[int(c.cell)], dirs[int(c.direction)],
                     c.layout, c.seq, c.batch, c.input, c.hidden, dtype_name(c.dtype), c.bias ? " bias" : "",
                     c.lens ? " lens" : "", c.h0 ? " h0" : "", c.c0 ? " c0" : "", c.peepholes ? " P" : "",
                     c.input_forget ? " input_forget" : "", c.linear_before_reset ? " lbr" : "",
                     c.clip ? fmt::format(" clip={}", *c.clip) : "", c.random_activations ? " acts" : "", tiling, modes[int(c.mode)], kernel);
}

std::vector<ActivationSpec> random_activations(CellType cell, int dirs, Random& rng) {
  // Every kind appears across the cases; alpha / beta in ranges that keep the state bounded.
  std::vector<ActivationSpec> acts;
  const int n = kernels::rnn::activations_per_direction(cell) * dirs;
  for (int i = 0; i < n; ++i) {
    ActivationSpec a;
    a.kind = static_cast<Activation>(rng.integer(0, 10));
    a.alpha = rng.uniform(1, 0.2, 0.9)[0];
    a.beta = rng.uniform(1, 0.1, 0.6)[0];
    if (a.kind == Activation::thresholded_relu) a.alpha = 0.1f;
    acts.push_back(a);
  }
  return acts;
}

// Runs one case; returns the largest rel L2 over the requested outputs.
double run_rnn_case(const RnnCase& c, Random& rng) {
  auto& g = gpu();
  RnnSpec spec;
  spec.cell = c.cell;
  spec.direction = c.direction;
  spec.layout = c.layout;
  spec.hidden_size = c.hidden;
  spec.clip = c.clip;
  spec.input_forget = c.input_forget;
  spec.linear_before_reset = c.linear_before_reset;
  spec.y_activation = c.y_activation;
  spec.y_activation_alpha = c.y_activation_alpha;
  const int64_t D = spec.num_directions(), G = kernels::rnn::gate_count(c.cell), H = c.hidden;
  if (c.random_activations) spec.activations = random_activations(c.cell, static_cast<int>(D), rng);

  RnnReferenceInputs ref;
  ref.seq = c.seq;
  ref.batch = c.batch;
  ref.input = c.input;
  const double wscale = 1.0 / std::sqrt(double(std::max(c.input, H)));
  ref.x = round_to_dtype(rng.uniform(c.seq * c.batch * c.input, -1.0, 1.0), c.dtype);
  ref.w = round_to_dtype(rng.uniform(D * G * H * c.input, -wscale, wscale), c.dtype);
  ref.r = round_to_dtype(rng.uniform(D * G * H * H, -wscale, wscale), c.dtype);
  if (c.bias) ref.b = round_to_dtype(rng.uniform(D * 2 * G * H, -0.5, 0.5), c.dtype);
  if (c.peepholes) ref.p = round_to_dtype(rng.uniform(D * 3 * H, -0.5, 0.5), c.dtype);
  if (c.h0) ref.h0 = round_to_dtype(rng.uniform(D * c.batch * H, -0.8, 0.8), c.dtype);
  if (c.c0) ref.c0 = round_to_dtype(rng.uniform(D * c.batch * H, -0.8, 0.8), c.dtype);
  if (c.lens) {
    for (int64_t b = 0; b < c.batch; ++b) ref.lens.push_back(static_cast<int>(rng.integer(b == 0 ? c.seq : 1, c.seq)));
  }
  RnnReferenceOutputs want = rnn_reference(spec, ref);
  for (double& v : want.y) {  // Y's store activation, on the zeros past a sequence's end too
    switch (c.y_activation) {
      case kernels::gemm::Activation::relu: v = std::max(v, 0.0); break;
      case kernels::gemm::Activation::leaky_relu: v = v >= 0 ? v : c.y_activation_alpha * v; break;
      case kernels::gemm::Activation::sigmoid: v = 1.0 / (1.0 + std::exp(-v)); break;
      case kernels::gemm::Activation::tanh: v = std::tanh(v); break;
      default: break;
    }
  }

  const Shape x_shape = c.layout == 0 ? Shape{c.seq, c.batch, c.input} : Shape{c.batch, c.seq, c.input};
  const Shape state_shape = kernels::rnn::rnn_state_shape(spec, x_shape);
  kernels::rnn::RnnInputs in;
  in.x = upload_floats(ref.x, c.dtype, x_shape);
  in.w = upload_floats(ref.w, c.dtype, {D, G * H, c.input});
  in.r = upload_floats(ref.r, c.dtype, {D, G * H, H});
  if (c.bias) in.b = upload_floats(ref.b, c.dtype, {D, 2 * G * H});
  if (c.peepholes) in.p = upload_floats(ref.p, c.dtype, {D, 3 * H});
  if (c.h0) in.initial_h = upload_floats(ref.h0, c.dtype, state_shape);
  if (c.c0) in.initial_c = upload_floats(ref.c0, c.dtype, state_shape);
  if (c.lens) in.sequence_lens = Tensor::upload(g.context, g.pool, DType::i32, {c.batch}, ref.lens.data());
  kernels::rnn::RnnOutputs out;
  if (c.want_y) out.y = poisoned(c.dtype, kernels::rnn::rnn_y_shape(spec, x_shape));
  if (c.want_yh) out.y_h = poisoned(c.dtype, state_shape);
  if (c.want_yc && c.cell == CellType::lstm) out.y_c = poisoned(c.dtype, state_shape);

  gpu::CommandRecorder recorder(g.context);
  kernels::KernelContext k{g.context, g.pipelines};
  kernels::rnn::RnnOptions options;
  options.max_projection_bytes = c.max_projection_bytes;
  options.step_tiling = c.tiling;
  options.step_mode = c.mode;
  options.step_kernel = c.kernel;
  options.tiled_tiling = c.tiled;
  options.vec4_tiling = c.vec4;
  options.row_tiling = c.rows;
  options.resident_tiling = c.resident;
  options.cooperative_tiling = c.coop;
  options.allow_subgroups = c.allow_subgroups;
  options.probe_cooperative_grid = c.probe_cooperative_grid;
  kernels::rnn::record_rnn(k, recorder, g.pool, spec, in, out, options);
  recorder.submit_and_wait();

  double worst = 0;
  std::string report;
  const auto check = [&](const Tensor& t, const std::vector<double>& ref_values, const char* name) {
    if (!t.defined()) return;
    const double e = rel_l2(t.download_floats(g.context), ref_values);
    report += fmt::format(" {}={:.2e}", name, e);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  };
  check(out.y, want.y, "Y");
  check(out.y_h, want.y_h, "Y_h");
  check(out.y_c, want.y_c, "Y_c");
  std::printf("  %s:%s\n", describe(c).c_str(), report.c_str());
  return worst;
}

double tolerance(DType dtype) { return dtype == DType::f16 ? 1e-3 : 1e-6; }

// also_per_step: small hidden sizes run as one whole-sequence dispatch by default; run each case
// once more one dispatch per step, so both step kernels see every attribute.
void run_all(const std::vector<RnnCase>& cases, bool also_per_step = false) {
  const uint64_t seed = test_seed();
  Random rng(seed);
  for (const RnnCase& c : cases) {
    EXPECT_LE(run_rnn_case(c, rng), tolerance(c.dtype)) << describe(c) << " seed " << seed;
    if (also_per_step && c.mode == kernels::rnn::StepMode::automatic) {
      RnnCase per_step = c;
      per_step.mode = kernels::rnn::StepMode::per_step;
      EXPECT_LE(run_rnn_case(per_step, rng), tolerance(c.dtype)) << describe(per_step) << " seed " << seed;
    }
  }
}

// An activation applied at Y's store (graph/fuse_activations.h), not to the state: every kind, on the
// per-step, whole-sequence and resident kernels, with sequence lengths (Y's zeros activated too).
TEST(RnnKernel, YActivationAtTheStore) {
  using kernels::gemm::Activation;
  std::vector<RnnCase> cases;
  const kernels::rnn::StepMode modes[] = {kernels::rnn::StepMode::per_step, kernels::rnn::StepMode::automatic,
                                          kernels::rnn::StepMode::resident};
  int i = 0;
  for (Activation a : {Activation::relu, Activation::leaky_relu, Activation::sigmoid, Activation::tanh}) {
    RnnCase c;
    c.cell = i % 2 ? CellType::gru : CellType::lstm;
    c.linear_before_reset = true;
    c.direction = Direction::bidirectional;
    c.lens = c.h0 = true;
    c.batch = 3;
    c.y_activation = a;
    c.y_activation_alpha = 0.3f;
    c.mode = modes[i % 3];
    cases.push_back(c);
    ++i;
  }
  run_all(cases);
}

TEST(RnnKernel, LstmAttributes) {
  std::vector<RnnCase> cases;
  for (Direction dir : {Direction::forward, Direction::reverse, Direction::bidirectional}) {
    for (int64_t layout : {0, 1}) {
      RnnCase c;
      c.direction = dir;
      c.layout = layout;
      c.lens = c.h0 = c.c0 = c.peepholes = (layout == 1 || dir == Direction::bidirectional);
      c.batch = 3;
      cases.push_back(c);
    }
  }
  RnnCase clip;
  clip.clip = 0.7f;
  clip.input_forget = true;
  clip.peepholes = true;
  clip.direction = Direction::bidirectional;
  cases.push_back(clip);
  RnnCase acts;
  acts.random_activations = true;
  acts.direction = Direction::bidirectional;
  acts.bias = false;
  cases.push_back(acts);
  run_all(cases, true);
}

TEST(RnnKernel, GruAttributes) {
  std::vector<RnnCase> cases;
  for (bool lbr : {false, true}) {
    for (Direction dir : {Direction::forward, Direction::reverse, Direction::bidirectional}) {
      RnnCase c;
      c.cell = CellType::gru;
      c.linear_before_reset = lbr;
      c.direction = dir;
      c.layout = dir == Direction::reverse ? 1 : 0;
      c.lens = c.h0 = dir != Direction::forward;
      c.batch = 3;
      cases.push_back(c);
    }
  }
  RnnCase clip;
  clip.cell = CellType::gru;
  clip.clip = 0.5f;
  clip.random_activations = true;
  clip.direction = Direction::bidirectional;
  clip.layout = 1;
  cases.push_back(clip);
  run_all(cases, true);
}

TEST(RnnKernel, PlainRnn) {
  std::vector<RnnCase> cases;
  for (Direction dir : {Direction::forward, Direction::bidirectional}) {
    RnnCase c;
    c.cell = CellType::rnn;
    c.direction = dir;
    c.lens = c.h0 = dir == Direction::bidirectional;
    c.layout = dir == Direction::bidirectional ? 1 : 0;
    cases.push_back(c);
  }
  RnnCase acts;
  acts.cell = CellType::rnn;
  acts.random_activations = true;
  acts.clip = 2.0f;
  acts.direction = Direction::bidirectional;
  cases.push_back(acts);
  run_all(cases);
}

// Every activation kind at least once per cell slot across a few seeds' worth of draws.
TEST(RnnKernel, EveryActivation) {
  std::vector<RnnCase> cases;
  for (int i = 0; i < 4; ++i) {
    RnnCase c;
    c.cell = i % 2 ? CellType::gru : CellType::lstm;
    c.linear_before_reset = i == 3;
    c.direction = Direction::bidirectional;
    c.random_activations = true;
    c.seq = 3;
    cases.push_back(c);
  }
  run_all(cases);
}

TEST(RnnKernel, Float16) {
  std::vector<RnnCase> cases;
  RnnCase lstm;
  lstm.dtype = DType::f16;
  lstm.direction = Direction::bidirectional;
  lstm.lens = lstm.h0 = lstm.c0 = lstm.peepholes = true;
  lstm.batch = 3;
  lstm.hidden = 7;  // odd: neighbouring halves written by different invocations
  cases.push_back(lstm);
  RnnCase gru;
  gru.cell = CellType::gru;
  gru.dtype = DType::f16;
  gru.layout = 1;
  gru.direction = Direction::reverse;
  gru.h0 = gru.lens = true;
  gru.hidden = 5;
  cases.push_back(gru);
  RnnCase odd;  // odd element counts: the last f16 word of Y / Y_h half used
  odd.cell = CellType::rnn;
  odd.dtype = DType::f16;
  odd.seq = 3;
  odd.batch = 1;
  odd.hidden = 5;
  cases.push_back(odd);
  run_all(cases, true);
}

// Hidden sizes over one 64-wide tile (several K chunks), batch over one 4-row tile, omitted outputs.
TEST(RnnKernel, LargerTilesAndOmittedOutputs) {
  std::vector<RnnCase> cases;
  RnnCase lstm;
  lstm.hidden = 70;
  lstm.batch = 6;
  lstm.input = 17;
  lstm.seq = 3;
  lstm.lens = lstm.h0 = true;
  lstm.direction = Direction::bidirectional;
  cases.push_back(lstm);
  RnnCase gru;
  gru.cell = CellType::gru;
  gru.hidden = 65;
  gru.batch = 5;
  gru.seq = 3;
  gru.want_y = false;
  cases.push_back(gru);
  RnnCase only_y;
  only_y.want_yh = only_y.want_yc = false;
  only_y.layout = 1;
  cases.push_back(only_y);
  run_all(cases);
}

// The chunked projection (buffer above the binding limit): forced by a small limit.
TEST(RnnKernel, ChunkedProjection) {
  std::vector<RnnCase> cases;
  for (int64_t layout : {0, 1}) {
    RnnCase c;
    c.layout = layout;
    c.seq = 7;
    c.batch = 2;
    c.direction = Direction::bidirectional;
    c.lens = true;
    c.max_projection_bytes = 3 * c.batch * 2 * 4 * c.hidden * 4;  // 3 steps per chunk
    cases.push_back(c);
  }
  RnnCase gru;
  gru.cell = CellType::gru;
  gru.dtype = DType::f16;
  gru.seq = 5;
  gru.direction = Direction::reverse;
  gru.max_projection_bytes = 1;  // one step per chunk
  cases.push_back(gru);
  RnnCase lstm16;  // layout 1 + f16: X widened to time-major float32, GEMM against f16 packed W
  lstm16.dtype = DType::f16;
  lstm16.layout = 1;
  lstm16.seq = 5;
  lstm16.direction = Direction::bidirectional;
  lstm16.h0 = lstm16.c0 = lstm16.lens = true;
  lstm16.max_projection_bytes = 2 * lstm16.batch * 2 * 4 * lstm16.hidden * 4;
  cases.push_back(lstm16);
  // Layout 0 + f16 with an odd batch x input: chunks of 3 steps of the reverse direction start at an
  // odd element of X, where no float16 view can start, so X is widened first.
  RnnCase odd16;
  odd16.dtype = DType::f16;
  odd16.seq = 7;
  odd16.batch = 3;
  odd16.direction = Direction::bidirectional;
  odd16.h0 = odd16.c0 = true;
  odd16.max_projection_bytes = 3 * odd16.batch * 2 * 4 * odd16.hidden * 4;
  cases.push_back(odd16);
  run_all(cases);
}

// Every shape of step tile, forced: narrow tiles with many K slices (small batch, large hidden),
// wide ones, batch tiles that do not divide B, K chunks that do not divide H, with every cell and
// the attributes that change the gate code (lens, peepholes, clip, layout 1, reverse).
TEST(RnnKernel, EveryStepTiling) {
  std::vector<RnnCase> cases;
  Random pick(test_seed() + 1);
  const kernels::rnn::StepTiling tilings[] = {{4, 64, 1, 64},  {8, 32, 3, 128}, {16, 8, 4, 64},
                                              {32, 8, 2, 256}, {64, 1, 1, 64},  {8, 4, 5, 64}};
  int i = 0;
  for (const auto& t : tilings) {
    RnnCase c;
    c.cell = static_cast<CellType>(i % 3);
    c.linear_before_reset = (i / 3) % 2 == 0;
    c.direction = static_cast<Direction>((i + 2) % 3);
    c.layout = i % 2;
    c.seq = 3 + i % 3;
    c.batch = 1 + pick.integer(0, 6);
    c.input = 7;
    c.hidden = 9 + pick.integer(0, 80);  // partial unit tiles and K chunks
    c.lens = c.h0 = i % 2 == 0;
    c.c0 = c.peepholes = c.cell == CellType::lstm;
    if (i % 4 == 1) c.clip = 0.8f;
    c.tiling = t;
    c.mode = kernels::rnn::StepMode::per_step;
    cases.push_back(c);
    ++i;
  }
  run_all(cases);
}

// Case i of a per-step kernel's test: cells, directions and layouts in turn, random batch (partial
// row tiles) and hidden sizes (partial unit and K tiles), lens and initial states on even i, clip on
// i % 4 == 1, random activations (i = 3), input_forget (4, where the cell is an LSTM), float16 (5), a
// chunked projection (6).
RnnCase varied_step_case(int i, Random& pick, int max_extra_batch, kernels::rnn::StepKernel kernel) {
  RnnCase c;
  c.cell = static_cast<CellType>(i % 3);
  c.direction = static_cast<Direction>((i + 2) % 3);
  c.layout = i % 2;
  c.seq = 3 + i % 3;
  c.batch = 5 + pick.integer(0, max_extra_batch);
  c.input = 7;
  c.hidden = 9 + pick.integer(0, 60);
  c.lens = c.h0 = i % 2 == 0;
  c.c0 = c.peepholes = c.cell == CellType::lstm;
  if (i % 4 == 1) c.clip = 0.8f;
  if (i == 3) c.random_activations = true;
  if (i == 4) c.input_forget = c.cell == CellType::lstm;
  if (i == 5) c.dtype = DType::f16;
  if (i == 6) c.max_projection_bytes = 2 * c.batch * 2 * 4 * c.hidden * 4;
  c.kernel = kernel;
  c.mode = kernels::rnn::StepMode::per_step;
  return c;
}

// The register-tiled step kernel (StepKernel::tiled): row and unit tiles that do not divide B and
// H, K tiles that do not divide H, K slices, every cell (GRU with both linear_before_reset, so the
// two-phase step too), both layouts, every direction, lens, initial states, peepholes, clip,
// input_forget, random activations, f16, the chunked projection, and the automatic tiling.
TEST(RnnKernel, TiledStep) {
  std::vector<RnnCase> cases;
  Random pick(test_seed() + 2);
  using T = kernels::rnn::TiledStepTiling;
  const std::optional<T> tilings[] = {T{64, 4, 32, 2, 32, 1}, T{16, 4, 8, 1, 32, 4}, T{8, 2, 16, 2, 12, 2},
                                      T{32, 4, 16, 1, 16, 2}, T{4, 4, 4, 4, 4, 1},   T{16, 1, 8, 1, 64, 2},
                                      std::nullopt,           std::nullopt};
  int i = 0;
  for (const auto& t : tilings) {
    RnnCase c = varied_step_case(i, pick, 30, kernels::rnn::StepKernel::tiled);
    c.linear_before_reset = (i / 3) % 2 == 0;
    c.tiled = t;
    cases.push_back(c);
    ++i;
  }
  RnnCase lstm;  // LSTM over the full default tile, lbr=0 GRU with K slices
  lstm.direction = Direction::bidirectional;
  lstm.batch = 70;
  lstm.hidden = 40;
  lstm.seq = 3;
  lstm.lens = lstm.h0 = lstm.c0 = true;
  lstm.kernel = kernels::rnn::StepKernel::tiled;
  lstm.tiled = T{64, 4, 32, 2, 32, 1};
  cases.push_back(lstm);
  RnnCase big = lstm;  // the large-batch default's shape of tile (8 rows per invocation)
  big.direction = Direction::reverse;
  big.batch = 140;
  big.tiled = T{128, 8, 16, 1, 32, 1};
  cases.push_back(big);
  RnnCase gru = lstm;
  gru.cell = CellType::gru;
  gru.c0 = false;
  gru.linear_before_reset = false;
  gru.tiled = T{16, 4, 16, 1, 16, 4};
  cases.push_back(gru);
  run_all(cases);
}

// The GEMM step (StepKernel::gemm: H_prev R^T of all directions on the GEMM core, then the cell
// kernel): every cell (GRU lbr=0 falls back to its two-phase step), both layouts, every direction,
// ragged lens, initial states, peepholes, clip, input_forget, random activations, f16, the chunked
// projection, sizes that fit no GEMM tile.
TEST(RnnKernel, GemmStep) {
  std::vector<RnnCase> cases;
  Random pick(test_seed() + 5);
  for (int i = 0; i < 8; ++i) {
    RnnCase c;
    c.cell = static_cast<CellType>(i % 3);
    c.linear_before_reset = i != 4;
    c.direction = static_cast<Direction>((i + 1) % 3);
    c.layout = (i / 2) % 2;
    c.seq = 3 + i % 3;
    c.batch = 3 + pick.integer(0, 40);
    c.input = 5 + i;
    c.hidden = 6 + pick.integer(0, 50);
    c.lens = c.h0 = i % 2 == 1;
    c.c0 = c.peepholes = c.cell == CellType::lstm && i != 3;
    if (i % 3 == 1) c.clip = 0.7f;
    if (i == 2) c.random_activations = true;
    if (i == 3) c.input_forget = true;
    if (i == 5) c.dtype = DType::f16;
    if (i == 6) c.max_projection_bytes = 2 * c.batch * 2 * 4 * c.hidden * 4;
    c.kernel = kernels::rnn::StepKernel::gemm;
    c.mode = kernels::rnn::StepMode::per_step;
    cases.push_back(c);
  }
  run_all(cases);
}

// The vec4 step (StepKernel::vec4: the GEMM core's tile on R^T with the cell in its epilogue): row,
// unit and K tiles that do not divide B and H, K slices, 8 rows per invocation, every fused cell (GRU
// lbr=0 falls back to its two-phase step), both layouts, every direction, ragged lens, initial
// states, peepholes, clip, input_forget, random activations, f16, the chunked projection, the
// double-buffered tiles, and the automatic tiling.
TEST(RnnKernel, Vec4Step) {
  std::vector<RnnCase> cases;
  Random pick(test_seed() + 7);
  using V = kernels::rnn::Vec4StepTiling;
  const std::optional<V> tilings[] = {V{16, 16, 8, 1, 16, 1},       V{4, 4, 4, 2, 8, 2, false}, V{2, 8, 8, 3, 12, 4},
                                      V{8, 2, 4, 1, 16, 4},        V{1, 1, 4, 1, 4, 1},        V{4, 8, 4, 2, 20, 4},
                                      std::nullopt,                std::nullopt,               V{8, 8, 8, 2, 16, 2},
                                      V{8, 8, 4, 1, 8, 2, true, true}, V{4, 4, 8, 2, 12, 3, true, true},
                                      V{4, 3, 4, 1, 8, 2, true, true}};
  int i = 0;
  for (const auto& t : tilings) {
    RnnCase c = varied_step_case(i, pick, 40, kernels::rnn::StepKernel::vec4);
    c.linear_before_reset = i != 7;
    if (i == 6) c.input_forget = true;  // an LSTM
    if (i == 8) {  // a bidirectional LSTM over 2 x 4 workgroups of 64 rows x 16 units
      c.cell = CellType::lstm;
      c.direction = Direction::bidirectional;
      c.batch = 100;
      c.hidden = 60;
      c.c0 = c.peepholes = true;
    }
    c.vec4 = t;
    cases.push_back(c);
    ++i;
  }
  run_all(cases);
}

// The persistent vec4 step (Vec4StepTiling::persistent: every step in one dispatch, h traded through
// the exchange). Its grid must run all at once, which on lavapipe means 2 workgroups (one per thread
// of its pool, as for the cooperative kernel): two unit tiles of one direction (each step waits for
// the other workgroup's units), or one tile per direction. Every fused cell, both layouts, every
// direction, ragged lens, initial states, peepholes, clip, input_forget, random activations, f16, K
// slices, two units and 8 rows per invocation, the double-buffered tiles, no prefetch, one step.
TEST(RnnKernel, Vec4Persistent) {
  std::vector<RnnCase> cases;
  Random pick(test_seed() + 8);
  using V = kernels::rnn::Vec4StepTiling;
  // TM, NV, BK, KS, prefetch, double buffer; WG_X and WG_Y follow from the case's shape.
  const V tilings[] = {V{1, 1, 4, 1, 8, 2, true, false},  V{1, 1, 4, 2, 8, 1, true, false},
                       V{1, 1, 8, 1, 12, 2, true, true},  V{1, 1, 4, 1, 16, 2, false, false},
                       V{1, 1, 4, 1, 16, 1, true, false}, V{1, 1, 4, 2, 8, 2, true, true},
                       V{1, 1, 8, 2, 8, 1, true, false}};
  int i = 0;
  for (V t : tilings) {
    RnnCase c = varied_step_case(i, pick, 0, kernels::rnn::StepKernel::vec4);
    // Shapes fixed per case (values stay random): the grid follows the shape and the hidden size is
    // compiled in, so random shapes would compile seven new pipelines every run (~30 s on lavapipe).
    c.batch = 3 + (i * 5) % 10;
    c.hidden = 8 + (i * 11) % 33;
    c.max_projection_bytes = 0;  // every step's projection at once
    c.linear_before_reset = true;
    if (i == 6) c.seq = 1;
    if (i == 2) c.input_forget = c.cell == CellType::lstm;
    const int64_t unit_tiles = c.direction == Direction::bidirectional ? 1 : 2;
    const int64_t units = (c.hidden + unit_tiles - 1) / unit_tiles;
    t.wg_x = static_cast<uint32_t>((units + t.thread_units - 1) / t.thread_units);
    t.wg_y = static_cast<uint32_t>((c.batch + t.thread_rows - 1) / t.thread_rows);
    t.persistent = true;
    c.vec4 = t;
    cases.push_back(c);
    ++i;
  }
  run_all(cases);
}

// All timesteps in one dispatch (StepMode::whole_sequence): several unit tiles per workgroup
// (H > JT), partial batch tiles, every cell, both directions and layouts, ragged lengths, clip,
// peepholes, random activations; and the fallbacks where it does not apply (GRU lbr=0, chunked).
TEST(RnnKernel, WholeSequence) {
  std::vector<RnnCase> cases;
  const kernels::rnn::StepTiling tilings[] = {{8, 4, 2, 64}, {16, 16, 3, 64}, {64, 4, 4, 64}};
  int i = 0;
  for (CellType cell : {CellType::lstm, CellType::gru, CellType::rnn}) {
    for (Direction dir : {Direction::bidirectional, Direction::reverse}) {
      RnnCase c;
      c.cell = cell;
      c.linear_before_reset = true;
      c.direction = dir;
      c.layout = i % 2;
      c.seq = 6;
      c.batch = 5;
      c.hidden = i % 2 ? 37 : 20;
      c.lens = c.h0 = true;
      c.c0 = c.peepholes = cell == CellType::lstm && i % 2 == 0;
      if (i == 1) c.clip = 0.6f;
      if (i == 3) c.random_activations = true;
      c.mode = kernels::rnn::StepMode::whole_sequence;
      if (i < 3) c.tiling = tilings[i];
      cases.push_back(c);
      ++i;
    }
  }
  RnnCase lbr0;  // two dispatches per step: per_step instead
  lbr0.cell = CellType::gru;
  lbr0.direction = Direction::bidirectional;
  lbr0.mode = kernels::rnn::StepMode::whole_sequence;
  cases.push_back(lbr0);
  RnnCase chunked;  // projection per chunk: per_step instead
  chunked.mode = kernels::rnn::StepMode::whole_sequence;
  chunked.max_projection_bytes = 1;
  cases.push_back(chunked);
  run_all(cases);
}

// All timesteps in one dispatch, a workgroup per block of rows owning every unit
// (StepMode::row_sequence): tilings with several row groups, thread rows and thread units (TU not
// dividing H, H not a multiple of 4), partial row blocks, every cell, every direction, both layouts,
// ragged lengths, initial states, clip, peepholes, input_forget, random activations, f16; and the
// fallbacks where it does not apply (GRU lbr=0, chunked projection).
// The attribute grid both whole-sequence kernels (row sequence, resident) run: every cell and
// direction, both layouts, ragged lengths, initial states, peepholes, input_forget, clip, random
// activations on the small cases, f16; `tile` sets case i's kernel options.
std::vector<RnnCase> sequence_kernel_cases(kernels::rnn::StepMode mode, const std::function<void(RnnCase&, int)>& tile) {
  std::vector<RnnCase> cases;
  int i = 0;
  for (CellType cell : {CellType::lstm, CellType::gru, CellType::rnn}) {
    for (Direction dir : {Direction::bidirectional, Direction::reverse, Direction::forward}) {
      RnnCase c;
      c.cell = cell;
      c.linear_before_reset = true;
      c.direction = dir;
      c.layout = i % 2;
      c.seq = 7;
      c.batch = i % 3 == 0 ? 13 : 5;
      c.input = 9;
      c.hidden = i % 3 == 0 ? 37 : i % 3 == 1 ? 20 : 64;
      c.lens = i % 2 == 0;
      c.h0 = true;
      c.c0 = c.peepholes = cell == CellType::lstm && i % 2 == 0;
      c.input_forget = cell == CellType::lstm && i == 1;
      if (i % 4 == 1) c.clip = 0.6f;
      // Random activations on the small cases only: unbounded ones (Relu, Affine) can overflow float32
      // over a longer, wider recurrence (seen at H = 37, B = 13 in every step kernel).
      if (i == 1 || i == 7) c.random_activations = true;
      if (i == 4 || i == 8) c.dtype = DType::f16;
      c.mode = mode;
      tile(c, i);
      cases.push_back(c);
      ++i;
    }
  }
  // The fallbacks: two dispatches per step (GRU lbr=0), a projection per chunk: per_step instead.
  RnnCase lbr0;
  lbr0.cell = CellType::gru;
  lbr0.direction = Direction::bidirectional;
  lbr0.mode = mode;
  cases.push_back(lbr0);
  RnnCase chunked;
  chunked.mode = mode;
  chunked.max_projection_bytes = 1;
  cases.push_back(chunked);
  return cases;
}

TEST(RnnKernel, RowSequence) {
  using R = kernels::rnn::RowSequenceTiling;
  // Scalar units for H = 37 (not a multiple of 4), vec4 units for H = 20 / 64; slices of K that the
  // blocks of KB do not divide, slices past H (H = 20 in 8 slices of 3), row blocks past the batch.
  const std::optional<R> tilings[] = {R{4, 2, 1, 2, 4}, R{6, 3, 4, 8, 4}, R{5, 5, 4, 3, 8},
                                      R{1, 1, 1, 4, 8}, std::nullopt,       R{16, 4, 4, 1, 4}};
  std::vector<RnnCase> cases = sequence_kernel_cases(kernels::rnn::StepMode::row_sequence,
                                                  [&](RnnCase& c, int i) { c.rows = tilings[i % 6]; });
  RnnCase wide;  // the chooser's two row groups per workgroup (H >= 256, 128+ rows) and K slices
  wide.direction = Direction::bidirectional;
  wide.batch = 67;
  wide.seq = 3;
  wide.hidden = 256;
  wide.lens = wide.h0 = wide.c0 = true;
  wide.mode = kernels::rnn::StepMode::row_sequence;
  cases.push_back(wide);
  run_all(cases);
}

TEST(RnnKernel, Resident) {
  using T = kernels::rnn::ResidentTiling;
  // Slices past H (H = 20 in slices of 16 or 32; H = 37 not a multiple of 4), one slice (NS = 1),
  // row blocks past the batch, up to 8 rows per block; the K-slice sums through subgroups (where
  // the adapter has them) and through workgroup memory.
  const std::optional<T> tilings[] = {T{2, 4}, T{1, 8}, std::nullopt, T{4, 1}, T{1, 16}, T{8, 2}};
  std::vector<RnnCase> cases = sequence_kernel_cases(kernels::rnn::StepMode::resident, [&](RnnCase& c, int i) {
    c.resident = tilings[i % 6];
    c.allow_subgroups = i % 2 == 0;
  });
  for (bool subgroups : {true, false}) {  // MP-SENet's GRU at H = 128 with the chooser's tiling
    RnnCase gru;
    gru.cell = CellType::gru;
    gru.linear_before_reset = true;
    gru.direction = Direction::bidirectional;
    gru.seq = 5;
    gru.batch = 11;
    gru.input = 16;
    gru.hidden = 128;
    gru.lens = gru.h0 = true;
    gru.mode = kernels::rnn::StepMode::resident;
    gru.allow_subgroups = subgroups;
    cases.push_back(gru);
  }
  run_all(cases);
}

// The cooperative kernel's workgroups wait for each other, so its grid must run all at once: on
// lavapipe that is one workgroup per thread of its pool (one per core; the CI machines have 2). The
// tilings keep every grid at 2 workgroups: two unit tiles of one direction (so each step waits for
// the other workgroup's units), or one tile per direction; every cell and direction, both layouts,
// ragged lengths, initial states, clip, peepholes, random activations, f16, partial unit tiles
// (H = 37 in tiles of 19), slices past H, row blocks of every row, two chunks of rows per workgroup,
// K-slice sums through subgroups and through workgroup memory.
TEST(RnnKernel, Cooperative) {
  using T = kernels::rnn::CooperativeTiling;
  std::vector<RnnCase> cases = sequence_kernel_cases(kernels::rnn::StepMode::cooperative, [&](RnnCase& c, int i) {
    const int64_t dirs = c.direction == Direction::bidirectional ? 2 : 1;
    const uint32_t kq = i % 3 == 2 ? 2 : 1;
    T t{1, 1, kq, 1};
    t.rows = std::min<uint32_t>(static_cast<uint32_t>(c.batch), t.slices(c.hidden));
    if (i % 4 == 3) {  // two chunks of rows per workgroup
      t.rows = static_cast<uint32_t>((c.batch + 1) / 2);
      t.row_chunks = 2;
    }
    const int64_t blocks = t.row_blocks(c.batch);
    const int64_t unit_tiles = std::max<int64_t>(1, 2 / (dirs * blocks));
    t.units = static_cast<uint32_t>((c.hidden + unit_tiles - 1) / unit_tiles);
    c.coop = t;
    c.allow_subgroups = i % 2 == 0;
  });
  // The fallbacks (GRU lbr=0, chunked projection) run per step; the chooser's tiling on a shape
  // whose grid is small.
  RnnCase chosen;
  chosen.direction = Direction::forward;
  chosen.seq = 6;
  chosen.batch = 2;
  chosen.hidden = 48;
  chosen.lens = chosen.h0 = chosen.c0 = true;
  chosen.mode = kernels::rnn::StepMode::cooperative;
  cases.push_back(chosen);
  run_all(cases);
}

// A cooperative grid run without the probe: where it is resident (an H200 holds these 512 small
// workgroups) the outputs match; where it is not (lavapipe runs one workgroup per thread, so the first
// ones wait for workgroups that cannot start) the bounded waits give up and the outputs are NaN. Never
// finite garbage, never a hang, and a GpuError from the run's guards.
TEST(RnnKernel, CooperativeGridNotResidentGivesNanNotAHang) {
  RnnCase c;
  c.direction = Direction::forward;
  c.seq = 3;
  c.batch = 64;
  c.input = 4;
  c.hidden = 8;
  c.mode = kernels::rnn::StepMode::cooperative;
  c.coop = kernels::rnn::CooperativeTiling{1, 1, 1, 1};  // 8 x 64 workgroups of 2 invocations
  c.probe_cooperative_grid = false;
  Random rng(test_seed());
  const auto start = std::chrono::steady_clock::now();
  const double worst = run_rnn_case(c, rng);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("  %.2f s, worst rel L2 %g\n", seconds, worst);
  EXPECT_TRUE(worst <= tolerance(c.dtype) || std::isinf(worst)) << worst;
  // The outputs are not all: the run's guard word says the waits gave up (gpu::RunGuards).
  if (std::isinf(worst)) {
    try {
      gpu().context.guards().check();
      ADD_FAILURE() << "NaN outputs but no guard error";
    } catch (const onda::gpu::GpuError& e) {
      EXPECT_NE(std::string(e.what()).find("was not resident"), std::string::npos) << e.what();
    }
  } else {
    EXPECT_NO_THROW(gpu().context.guards().check());
  }
}

// A forward LSTM, hidden 8, 3 steps of batch 2 (input 5), its tensors unfilled: enough to plan and
// record, for the tests that expect record_rnn to reject a tiling.
struct UnfilledLstm {
  Gpu& g = gpu();
  RnnSpec spec;
  kernels::rnn::RnnInputs in;
  kernels::rnn::RnnOutputs out;
  kernels::KernelContext k{g.context, g.pipelines};
  gpu::CommandRecorder recorder{g.context};
  UnfilledLstm() {
    spec.hidden_size = 8;
    in.x = Tensor::empty(g.pool, DType::f32, {3, 2, 5});
    in.w = Tensor::empty(g.pool, DType::f32, {1, 32, 5});
    in.r = Tensor::empty(g.pool, DType::f32, {1, 32, 8});
    out.y_h = Tensor::empty(g.pool, DType::f32, {1, 2, 8});
  }
  void record(const kernels::rnn::RnnOptions& options) {
    kernels::rnn::record_rnn(k, recorder, g.pool, spec, in, out, options);
  }
};

TEST(RnnKernel, CooperativeRejectsWhatDoesNotFit) {
  UnfilledLstm l;
  kernels::rnn::RnnOptions options;
  options.cooperative_tiling = kernels::rnn::CooperativeTiling{8, 2, 4, 1};  // 2 rows, 1 slice
  EXPECT_THROW(l.record(options), std::invalid_argument);
  options.cooperative_tiling = kernels::rnn::CooperativeTiling{0, 1, 1, 1};
  EXPECT_THROW(l.record(options), std::invalid_argument);
  options.cooperative_tiling = kernels::rnn::CooperativeTiling{8, 1, 1, 0};
  EXPECT_THROW(l.record(options), std::invalid_argument);
  // A grid this device cannot hold at once, from its limits: workgroups of up to 512 invocations (32
  // units x 16 slices of H = 64, fewer units where the device allows fewer) and enough of them for
  // 2^23 invocations, some 30 times what the largest GPUs keep resident (an H200: 132 SMs x 2048
  // threads), one batch row per workgroup within the grid's per-dimension limit.
  const wgpu::Limits& limits = l.g.context.limits();
  const uint32_t max_invocations =
      std::min(limits.maxComputeInvocationsPerWorkgroup, limits.maxComputeWorkgroupSizeX);
  const uint32_t units = std::min<uint32_t>(32, max_invocations / 16);
  ASSERT_GE(units, 1u);
  const int64_t hidden = 64, workgroup_size = int64_t{units} * 16;
  const int64_t batch =
      std::min<int64_t>((int64_t{1} << 23) / workgroup_size, limits.maxComputeWorkgroupsPerDimension);
  l.spec.hidden_size = hidden;
  l.in.x = Tensor::empty(l.g.pool, DType::f32, {2, batch, 5});
  l.in.w = Tensor::empty(l.g.pool, DType::f32, {1, 4 * hidden, 5});
  l.in.r = Tensor::empty(l.g.pool, DType::f32, {1, 4 * hidden, hidden});
  l.out.y_h = Tensor::empty(l.g.pool, DType::f32, {1, batch, hidden});
  options.cooperative_tiling = kernels::rnn::CooperativeTiling{units, 1, 1, 1};
  options.step_mode = kernels::rnn::StepMode::cooperative;
  try {
    l.record(options);
    ADD_FAILURE() << "a grid of " << batch << " workgroups of " << workgroup_size
                  << " invocations was taken as resident";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("runs all at once"), std::string::npos) << e.what();
  }
}

TEST(RnnKernel, Vec4PersistentRejectsWhatCannotRun) {
  UnfilledLstm l;
  kernels::rnn::RnnOptions options;
  options.step_mode = kernels::rnn::StepMode::per_step;  // (else the whole-sequence kernel takes H = 8)
  options.step_kernel = kernels::rnn::StepKernel::vec4;
  options.vec4_tiling = kernels::rnn::Vec4StepTiling{4, 1, 4, 1, 8, 1, true, false, true};
  options.max_projection_bytes = 256;  // chunked: not every step's projection at once
  const std::string chunked = invalid_argument_message([&] { l.record(options); });
  EXPECT_NE(chunked.find("persistent vec4 step"), std::string::npos) << chunked;
  // 2^14 rows in blocks of 4 and one unit per workgroup: 32768 workgroups, more than run at once.
  options.max_projection_bytes = 0;
  options.vec4_tiling = kernels::rnn::Vec4StepTiling{1, 1, 4, 1, 8, 1, true, false, true};
  l.in.x = Tensor::empty(l.g.pool, DType::f32, {2, 16384, 5});
  l.out.y_h = Tensor::empty(l.g.pool, DType::f32, {1, 16384, 8});
  const std::string resident = invalid_argument_message([&] { l.record(options); });
  EXPECT_NE(resident.find("does not run all at once"), std::string::npos) << resident;
}

TEST(RnnKernel, ResidentRejectsTilingsThatDoNotFit) {
  UnfilledLstm l;
  kernels::rnn::RnnOptions options;
  options.resident_tiling = kernels::rnn::ResidentTiling{2, 4};  // 2 rows, 1 slice: a row without a slice
  EXPECT_THROW(l.record(options), std::invalid_argument);
  options.resident_tiling = kernels::rnn::ResidentTiling{1, 0};
  EXPECT_THROW(l.record(options), std::invalid_argument);
}

TEST(RnnKernel, DispatchesPerStep) {
  auto& g = gpu();
  RnnSpec spec;
  spec.hidden_size = 8;
  spec.direction = Direction::bidirectional;
  const int64_t S = 5;
  Random rng(test_seed());
  kernels::rnn::RnnInputs in;
  in.x = upload_floats(rng.uniform(S * 2 * 3, -1, 1), DType::f32, {S, 2, 3});
  in.w = upload_floats(rng.uniform(2 * 32 * 3, -1, 1), DType::f32, {2, 32, 3});
  in.r = upload_floats(rng.uniform(2 * 32 * 8, -1, 1), DType::f32, {2, 32, 8});
  kernels::rnn::RnnOutputs out;
  out.y = Tensor::empty(g.pool, DType::f32, kernels::rnn::rnn_y_shape(spec, in.x.shape()));
  kernels::KernelContext k{g.context, g.pipelines};
  gpu::CommandRecorder prep(g.context);
  const auto weights = kernels::rnn::prepare_rnn_weights(k, prep, g.pool, spec, in.w, in.r, {}, {});
  prep.submit_and_wait();
  for (auto mode : {kernels::rnn::StepMode::per_step, kernels::rnn::StepMode::automatic}) {
    gpu::CommandRecorder recorder(g.context);
    kernels::rnn::RnnOptions options;
    options.step_mode = mode;
    kernels::rnn::record_rnn(k, recorder, g.pool, spec, weights, in, out, options);
    const size_t dispatches = recorder.dispatch_count();
    recorder.submit_and_wait();
    const bool per_step = mode == kernels::rnn::StepMode::per_step;
    std::printf("  bidirectional LSTM H=8, %lld steps, %s: %zu dispatches\n", static_cast<long long>(S),
                per_step ? "per step" : "automatic (whole sequence: R is 2 KiB)", dispatches);
    // initial h and c are clears (no dispatch); the projection is one GEMM dispatch; then one
    // dispatch per step, or one for the whole sequence.
    EXPECT_EQ(dispatches, per_step ? static_cast<size_t>(S) + 1 : 2u);
  }
  {  // the row-sequence kernel: one dispatch for all steps too
    gpu::CommandRecorder recorder(g.context);
    kernels::rnn::RnnOptions options;
    options.step_mode = kernels::rnn::StepMode::row_sequence;
    kernels::rnn::record_rnn(k, recorder, g.pool, spec, weights, in, out, options);
    EXPECT_EQ(recorder.dispatch_count(), 2u);
    recorder.submit_and_wait();
  }
}

TEST(RnnKernel, RejectsBadShapes) {
  auto& g = gpu();
  RnnSpec spec;
  spec.hidden_size = 4;
  kernels::rnn::RnnInputs in;
  in.x = Tensor::empty(g.pool, DType::f32, {3, 2, 5});
  in.w = Tensor::empty(g.pool, DType::f32, {1, 16, 5});
  in.r = Tensor::empty(g.pool, DType::f32, {1, 16, 3});  // wrong: H = 4
  kernels::KernelContext k{g.context, g.pipelines};
  gpu::CommandRecorder recorder(g.context);
  EXPECT_THROW(kernels::rnn::record_rnn(k, recorder, g.pool, spec, in, {}), std::invalid_argument);
  in.r = Tensor::empty(g.pool, DType::f32, {1, 16, 4});
  in.initial_h = Tensor::empty(g.pool, DType::f32, {1, 3, 4});  // wrong batch
  EXPECT_THROW(kernels::rnn::record_rnn(k, recorder, g.pool, spec, in, {}), std::invalid_argument);
  EXPECT_THROW(ops::rnn_activations_from_onnx({"Swish"}, {}, {}), std::invalid_argument);
  const auto acts = ops::rnn_activations_from_onnx({"HardSigmoid", "Tanh", "LeakyRelu"}, {0.3f}, {0.4f});
  EXPECT_FLOAT_EQ(acts[0].alpha, 0.3f);
  EXPECT_FLOAT_EQ(acts[0].beta, 0.4f);
  EXPECT_FLOAT_EQ(acts[2].alpha, 0.01f);  // alpha list exhausted: LeakyRelu's default
}

}  // namespace
}  // namespace onda::test
