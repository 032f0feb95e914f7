// Recurrent layers (ONNX LSTM / GRU, float32) against cuDNN: bench/torch_rnn.py runs the same shapes
// (bench/rnn_cases.h) through torch.nn.LSTM / GRU in the same GPU-machine call (bench/rnn.sh).
//
//   build/bench_rnn [--quick] [--repeats R] [--floor-steps N] [--only SUBSTRING] [--sweep] [--no-variants]
//                   [--variants REGEX] [--case CELL,DIRS,T,B,I,H ...] [--tuning rnn.FIELD=VALUE ...]
//
// First the dispatch floor: N dependent trivial dispatches (one workgroup reads and writes the same
// word) in one compute pass, GPU time per dispatch (GpuSpan, bench/gpu_span.h) and wall time with
// encoding. Then per shape, the median of R runs of the whole layer (projection GEMM + T steps):
//   gpu ms      GPU time of the layer recorded as onda records it (one pass, GpuSpan)
//   wall ms     host time to record, submit and wait for the layer
//   sub ms      GPU time of the layer recorded before the span starts (GpuSpan around the submit only)
//   disp/step   dispatches of the steps / T (1 per step; 1/T when the whole sequence is one dispatch)
//   us/step     gpu ms / T
//   floor/step  the floor x dispatches per step: what the steps would cost if they did no work
//   kernel us   mean GPU time of one step dispatch alone (gpu::Profiler: each dispatch its own pass)
//   proj ms     GPU time of the projection GEMM(s) (gpu::Profiler)
//   before ms   gpu ms of the code before this benchmark existed: one dispatch per step (per_step) with
//               its fixed tiling (JT 64, KS 4, BT 4, KC 64)
//   kernel      the step kernel the automatic choice took (dot, tiled, or seq = whole sequence)
// Under each case, one line of variants (GPU ms of the whole layer, same measure as gpu ms):
//   dot         rnn_step.wgsl with choose_step_tiling (the code before the tiled kernel)
//   tiled       rnn_step_tiled.wgsl with choose_tiled_step_tiling
//   gemm        the GEMM step (the GEMM core's H_prev R^T, then rnn_step_gates.wgsl)
//   vec4        rnn_step_vec4.wgsl with choose_vec4_step_tiling; vBMxBU/TMxNVkBKsKS[p0] with that
//               tiling (rows x units per workgroup, rows x units per invocation, K tile, K slices, p0:
//               no register prefetch; --sweep, batch >= 32)
//   BMxBU/TMxTU kKT sKS   rnn_step_tiled.wgsl with that tiling (rows x units per workgroup,
//               rows x units per invocation, K tile, K slices)
//   rows        rnn_sequence_rows.wgsl (whole sequence, a workgroup per block of rows) with
//               choose_row_sequence_tiling; rowsBM/TMvUVsKSbKB with that tiling
//   resident    rnn_sequence_resident.wgsl (whole sequence, R^T in registers) with choose_resident_tiling;
//               resident-wgmem without subgroups; resBMqKQ with that tiling
//   coop        rnn_sequence_cooperative.wgsl (whole sequence, R^T in the registers of many workgroups
//               trading h through memory), the first resident candidate tiling; coop-wgmem without
//               subgroups; coopJTrBMqKQ[cRC] each candidate (batch <= 128 only)
// and the best of them against cuDNN.
// --sweep also times a grid of step tilings per shape (JT x KS, BT, KC), gpu ms each, for tuning
// choose_step_tiling.
// --variants REGEX times only the variants whose name matches (std::regex_search), and with --sweep
// skips the step-tiling grid unless "dot" matches.
// --case (repeatable) times the given shapes instead of rnn_cases.h's: CELL lstm | gru | gru0
// (linear_before_reset = 0), DIRS uni | bi, e.g. --case lstm,bi,85,432,256,256 (SCNet's H256 band
// layer at half the batch); no cuDNN figure.
// --tuning (repeatable; tuning_args.h) applies a kernel tuning to every layer timed, as
// SessionOptions::tuning does to a model's (e.g. --tuning rnn.step_kernel=vec4 --tuning
// rnn.vec4=16,8,4,1,16,2).
// --quick shrinks every shape (T <= 12, B <= 5, H <= 72) so that a CPU adapter finishes in seconds.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/clock_warmup.h"
#include "gpu/command_recorder.h"
#include "gpu/pipeline_cache.h"
#include "gpu/profiler.h"
#include "gpu_span.h"
#include "kernels/kernel_context.h"
#include "kernels/rnn/rnn_kernel.h"
#include "rnn_cases.h"
#include "tuning_args.h"

using namespace onda;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Each dispatch reads the word the previous one wrote, so WebGPU must order them (a barrier each).
constexpr const char* kFloorWgsl = R"(
@group(0) @binding(0) var<storage, read_write> word: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) i: u32) {
  if (i == 0u) {
    word[0] = word[0] + 1u;
  }
}
)";

struct Floor {
  double gpu_us, wall_us;
};

Floor measure_floor(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines, int steps,
                    int repeats) {
  const auto& pipeline = pipelines.get(kFloorWgsl, {}, "dispatch_floor");
  const Tensor word = Tensor::empty(pool, DType::i32, {1});
  bench::GpuSpan span(context);
  std::vector<double> gpu_us, wall_us;
  for (int r = 0; r <= repeats; ++r) {
    gpu::CommandRecorder recorder(context);
    const auto start = std::chrono::steady_clock::now();
    const double ms = span.measure([&] {
      for (int s = 0; s < steps; ++s) recorder.dispatch(pipeline, {word.binding(context)}, nullptr, 0, {1, 1, 1}, "floor");
      recorder.submit();
    });
    const double wall = ms_since(start);
    if (r == 0) continue;  // warm-up
    gpu_us.push_back(ms * 1e3 / steps);
    wall_us.push_back(wall * 1e3 / steps);
  }
  return {median(gpu_us), median(wall_us)};
}

std::vector<float> random_floats(size_t n, float bound, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-bound, bound);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct LayerTimes {
  double gpu_ms, wall_ms, submit_ms, step_kernel_us, projection_ms;
  size_t dispatches, projection_dispatches;
};

// The --tuning of the command line.
kernels::KernelTuning g_tuning;

LayerTimes time_layer(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines,
                      const bench::RnnCase& c, int repeats, const kernels::rnn::RnnOptions& options, bool profile) {
  using namespace kernels::rnn;
  RnnSpec spec;
  spec.cell = c.lstm ? CellType::lstm : CellType::gru;
  spec.linear_before_reset = c.linear_before_reset;
  spec.direction = c.bidirectional ? Direction::bidirectional : Direction::forward;
  spec.hidden_size = c.hidden;
  const int64_t D = spec.num_directions(), G = gate_count(spec.cell), H = c.hidden;
  std::mt19937 rng(1234);
  const float bound = 1.0f / std::sqrt(static_cast<float>(H));  // PyTorch's initialisation
  RnnInputs in;
  in.x = Tensor::upload(context, pool, DType::f32, {c.seq, c.batch, c.input},
                        random_floats(c.seq * c.batch * c.input, 1.0f, rng).data());
  const Tensor w = Tensor::upload(context, pool, DType::f32, {D, G * H, c.input},
                                  random_floats(D * G * H * c.input, bound, rng).data());
  const Tensor r = Tensor::upload(context, pool, DType::f32, {D, G * H, H}, random_floats(D * G * H * H, bound, rng).data());
  const Tensor b = Tensor::upload(context, pool, DType::f32, {D, 2 * G * H}, random_floats(D * 2 * G * H, bound, rng).data());
  RnnOutputs out;
  out.y = Tensor::empty(pool, DType::f32, rnn_y_shape(spec, in.x.shape()));
  out.y_h = Tensor::empty(pool, DType::f32, rnn_state_shape(spec, in.x.shape()));
  if (c.lstm) out.y_c = Tensor::empty(pool, DType::f32, rnn_state_shape(spec, in.x.shape()));
  const kernels::KernelContext k{context, pipelines, g_tuning};
  RnnWeights weights;
  {
    gpu::CommandRecorder prep(context);
    weights = prepare_rnn_weights(k, prep, pool, spec, w, r, b, {});
    prep.submit_and_wait();
  }

  gpu::warm_up_clocks(context, pool, repeats > 3 ? 0.2 : 0.02);  // the uploads above left the GPU idle
  LayerTimes t{};
  bench::GpuSpan span(context);
  std::vector<double> gpu_ms, wall_ms;
  for (int rep = 0; rep <= repeats; ++rep) {
    gpu::CommandRecorder recorder(context);
    const auto start = std::chrono::steady_clock::now();
    const double ms = span.measure([&] {
      record_rnn(k, recorder, pool, spec, weights, in, out, options);
      t.dispatches = recorder.dispatch_count();
      recorder.submit();
    });
    const double wall = ms_since(start);
    if (rep == 0) {
      // Warm-up (pipeline creation). Compiling a large unrolled shader can leave the GPU idle long
      // enough for its clocks to drop, so they are brought up again before the timed runs.
      gpu::warm_up_clocks(context, pool, 0.1);
      continue;
    }
    gpu_ms.push_back(ms);
    wall_ms.push_back(wall);
  }
  t.gpu_ms = median(gpu_ms);
  t.wall_ms = median(wall_ms);
  // The same layer recorded before the first marker: the GPU's part alone (in a model, onda records
  // ahead of the GPU, so this host time overlaps the work of earlier submits).
  std::vector<double> submit_ms;
  for (int rep = 0; rep < repeats; ++rep) {
    gpu::CommandRecorder recorder(context);
    record_rnn(k, recorder, pool, spec, weights, in, out, options);
    submit_ms.push_back(span.measure([&] { recorder.submit(); }));
  }
  t.submit_ms = median(submit_ms);

  // Per-kernel breakdown: every dispatch in its own timed pass (the first 2048 dispatches).
  if (!profile) return t;
  gpu::Profiler profiler(context, 2048);
  if (profiler.available()) {
    gpu::CommandRecorder recorder(context, &profiler);
    record_rnn(k, recorder, pool, spec, weights, in, out, options);
    recorder.submit_and_wait();
    double step_ms = 0, step_count = 0;
    for (const auto& e : profiler.entries()) {
      // Per step: the step kernels, and the GEMM step's product (a GEMM dispatch once per step; the
      // projection runs once, or once per chunk and direction). The first 2048 dispatches are timed.
      if (e.name.rfind("rnn_step", 0) == 0 || (c.seq > 4 && e.count >= static_cast<size_t>(c.seq))) {
        step_ms += e.total_ms;
        step_count = std::max(step_count, static_cast<double>(e.count));
      } else if (e.name == "rnn_sequence" || e.name == "rnn_rows" || e.name == "rnn_resident" ||
                 e.name == "rnn_cooperative") {  // one dispatch for all steps
        step_ms += e.total_ms;
        step_count = static_cast<double>(c.seq);
      } else {
        t.projection_ms += e.total_ms;
        t.projection_dispatches += e.count;
      }
    }
    t.step_kernel_us = step_count > 0 ? step_ms * 1e3 / step_count : 0;
  }
  return t;
}

// GPU ms of the layer for a grid of step tilings, one line per batch tile and chunk.
void sweep_tilings(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines, const bench::RnnCase& c,
                   int repeats) {
  const wgpu::Limits& limits = context.limits();
  const uint32_t gates = c.lstm ? 4 : c.linear_before_reset ? 3 : 2;
  for (auto mode : {kernels::rnn::StepMode::per_step, kernels::rnn::StepMode::whole_sequence}) {
    kernels::rnn::RnnOptions options;
    options.step_mode = mode;
    const LayerTimes r = time_layer(context, pool, pipelines, c, repeats, options, false);
    fmt::print("    sweep {} (automatic tiling): {:.3f} ms\n",
               mode == kernels::rnn::StepMode::per_step ? "per_step" : "whole_sequence", r.gpu_ms);
  }
  for (uint32_t bt : {1u, 2u, 4u, 8u}) {
    if (bt > 1 && bt / 2 >= c.batch) continue;
    for (uint32_t kc : {64u, 256u}) {
      if (kc == 256 && c.hidden <= 64) continue;
      std::string line = fmt::format("    sweep BT={} KC={}:", bt, kc);
      for (uint32_t jt : {64u, 32u, 16u, 8u, 4u}) {
        for (uint32_t ks : {256u / jt, 128u / jt}) {
          if (ks == 0 || jt * ks < 32) continue;
          const kernels::rnn::StepTiling t{jt, ks, bt, kc};
          if (t.workgroup_bytes(gates) > limits.maxComputeWorkgroupStorageSize) continue;
          kernels::rnn::RnnOptions options;
          options.step_mode = kernels::rnn::StepMode::per_step;
          options.step_tiling = t;
          options.step_kernel = kernels::rnn::StepKernel::dot;
          const LayerTimes r = time_layer(context, pool, pipelines, c, repeats, options, false);
          line += fmt::format(" {}x{}:{:.3f}", jt, ks, r.gpu_ms);
        }
      }
      fmt::print("{}\n", line);
    }
  }
}

std::string tiled_name(const kernels::rnn::TiledStepTiling& t) {
  return fmt::format("{}x{}/{}x{}k{}s{}", t.rows, t.units, t.thread_rows, t.thread_units, t.k_tile, t.k_split);
}

// The step variants timed for every case: both kernels with their automatic tilings, then fixed
// tiled tilings around the automatic choice (see the header).
void time_variants(gpu::Context& context, gpu::BufferPool& pool, gpu::PipelineCache& pipelines, const bench::RnnCase& c,
                   int repeats, bool sweep, const std::regex& filter) {
  using kernels::rnn::StepKernel;
  using kernels::rnn::StepMode;
  using T = kernels::rnn::TiledStepTiling;
  struct Variant {
    std::string name;
    kernels::rnn::RnnOptions options;
  };
  std::vector<Variant> variants;
  {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::per_step;
    o.step_kernel = StepKernel::dot;
    variants.push_back({"dot", o});
    o.step_kernel = StepKernel::tiled;
    variants.push_back({"tiled", o});
    o.step_kernel = StepKernel::gemm;
    variants.push_back({"gemm", o});
    o.step_kernel = StepKernel::vec4;
    variants.push_back({"vec4", o});
  }
  // Fixed tilings of the vec4 step (the sweep behind choose_vec4_step_tiling): with --sweep only.
  using V = kernels::rnn::Vec4StepTiling;
  const std::vector<V> vec4_fixed = {
      V{16, 8, 4, 1, 32, 2, true},  V{16, 8, 4, 1, 32, 4, true},  V{16, 8, 4, 1, 64, 2, true},
      V{16, 8, 4, 1, 64, 4, true},  V{16, 16, 4, 1, 32, 2, true}, V{16, 8, 4, 1, 32, 2, false},
      V{8, 8, 4, 1, 32, 2, true},   V{8, 8, 4, 1, 32, 4, true},   V{16, 4, 4, 1, 32, 4, true},
      V{32, 8, 4, 1, 32, 2, true},  V{16, 8, 4, 1, 16, 2, true},  V{16, 16, 8, 1, 16, 1, true},
      V{16, 32, 4, 1, 16, 1, true}, V{16, 8, 8, 1, 32, 2, true},  V{32, 4, 4, 1, 32, 2, true},
      V{16, 24, 4, 1, 16, 1, true},
      // Not yet measured (2026-12-04 late): two units per invocation (NV = 2: 32 FMAs per 3 workgroup
      // loads instead of 16 per 2), the double-buffered tiles (one barrier per K tile), and blocks of
      // 64-128 rows x 16-32 units. Per step every workgroup reads its R^T columns and rows of h from
      // L2: (1 / BM + 1 / (4 BU)) D M N K 4 bytes in all (M = B, N = 4H, K = H), 85 MB at SCNet's B = 864
      // H256 step with today's 32 x 16 blocks, 28 MB with 128 x 32: about 15 / 5 us if L2 delivers
      // ~5.5 TB/s (an assumed figure, H100-class), a bound of the same order as the FMAs' 14 us.
      V{16, 8, 4, 1, 16, 2, true, true}, V{32, 8, 4, 1, 32, 2, true, true}, V{8, 8, 4, 2, 16, 2, true},
      V{16, 8, 4, 2, 16, 2, true}, V{16, 8, 4, 2, 32, 2, true}, V{8, 16, 4, 2, 16, 2, true},
      V{8, 8, 8, 2, 16, 2, true}, V{16, 8, 4, 2, 16, 2, true, true}, V{16, 16, 8, 2, 8, 2, true},
      V{16, 16, 8, 2, 16, 1, true}, V{8, 16, 8, 2, 16, 2, true}, V{16, 8, 8, 2, 16, 2, true},
      // SCNet's B = 85 H512 time LSTM: 32 x 32 blocks give 16 x 3 x 2 = 96 workgroups for 132 SMs, a third of
      // the last row block empty; 44-row blocks cover 85 rows in two, 16 units x 44 rows make 128 workgroups.
      V{16, 11, 4, 1, 32, 2, true}, V{32, 11, 4, 1, 32, 2, true}, V{16, 11, 4, 1, 32, 2, true, true},
      // Persistent (every step in one dispatch, h through the exchange; "ps"): grids of 112-128 workgroups
      // at B = 864 H256, B = 433 H512 and B = 85 H512, one per SM; a grid that is not resident is n/a.
      V{16, 16, 8, 2, 16, 1, true, false, true}, V{16, 16, 8, 2, 8, 2, true, false, true},
      V{16, 11, 4, 1, 32, 2, true, false, true}, V{16, 8, 4, 2, 16, 2, true, false, true},
      V{16, 16, 8, 2, 16, 1, true, true, true}};
  for (const V& t : sweep && c.batch >= 32 ? vec4_fixed : std::vector<V>{}) {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::per_step;
    o.step_kernel = StepKernel::vec4;
    o.vec4_tiling = t;
    variants.push_back({fmt::format("v{}x{}/{}x{}k{}s{}{}", t.rows(), t.units(), t.thread_rows, t.thread_units,
                                    t.k_tile, t.k_split,
                                    std::string(t.double_buffer ? "db" : t.prefetch ? "" : "p0") +
                                        (t.persistent ? "ps" : "")),
                        o});
  }
  // Fixed tilings of the tiled step (the sweep behind choose_tiled_step_tiling): with --sweep only.
  const std::vector<T> fixed = {T{64, 4, 32, 2, 32, 1}, T{32, 4, 32, 2, 32, 2}, T{32, 4, 16, 1, 32, 2}, T{16, 4, 32, 2, 32, 4},
                     T{16, 4, 16, 1, 32, 4}, T{64, 4, 16, 1, 32, 1}, T{32, 4, 32, 2, 16, 1}, T{128, 8, 32, 2, 16, 1},
                     T{64, 4, 64, 4, 16, 1}, T{32, 2, 16, 1, 32, 2}, T{16, 4, 16, 1, 64, 4}, T{32, 4, 16, 1, 64, 2},
                     T{16, 4, 32, 2, 64, 2}, T{16, 2, 16, 1, 64, 4}, T{128, 8, 16, 1, 32, 1}, T{64, 8, 16, 1, 32, 1},
                     T{64, 8, 32, 2, 16, 1}};
  for (const T& t : sweep ? fixed : std::vector<T>{}) {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::per_step;
    o.step_kernel = StepKernel::tiled;
    o.tiled_tiling = t;
    variants.push_back({tiled_name(t), o});
  }
  {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::row_sequence;
    variants.push_back({"rows", o});
  }
  using R = kernels::rnn::RowSequenceTiling;
  // The best row tilings of the 2026-12-03 sweep (17 tilings; docs/benchmark-log.md).
  for (const R& t : {R{1, 1, 4, 8, 8}, R{1, 1, 4, 4, 8}, R{2, 1, 4, 4, 4}}) {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::row_sequence;
    o.row_tiling = t;
    variants.push_back({fmt::format("rows{}/{}v{}s{}b{}", t.rows, t.thread_rows, t.unit_vector, t.k_split, t.k_block), o});
  }
  // The resident kernel where R^T fits the registers (beyond, the spills take seconds).
  const uint64_t r_bytes = uint64_t(c.lstm ? 4 : 3) * c.hidden * c.hidden * 4;
  if (r_bytes <= kernels::rnn::kResidentMaxWeightBytes) {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::resident;
    variants.push_back({"resident", o});
    o.allow_subgroups = false;
    variants.push_back({"resident-wgmem", o});
  }
  for (uint32_t kq : r_bytes <= kernels::rnn::kResidentMaxWeightBytes ? std::vector<uint32_t>{4u, 8u} : std::vector<uint32_t>{}) {
    for (uint32_t bm : {1u, 2u, 4u, 8u}) {
      kernels::rnn::RnnOptions o;
      o.step_mode = StepMode::resident;
      o.resident_tiling = kernels::rnn::ResidentTiling{bm, kq};
      variants.push_back({fmt::format("res{}q{}", bm, kq), o});
    }
  }
  // The cooperative kernel for the batches it is meant for: the automatic choice (the first resident
  // of cooperative_tiling_candidates), without subgroups, and every candidate forced
  // (coopJTrBMqKQ[cRC]; n/a where its grid is not resident).
  if (c.batch <= 128) {
    kernels::rnn::RnnOptions o;
    o.step_mode = StepMode::cooperative;
    variants.push_back({"coop", o});
    o.allow_subgroups = false;
    variants.push_back({"coop-wgmem", o});
    for (const auto& t : kernels::rnn::cooperative_tiling_candidates(c.batch, c.hidden, 1024, 32)) {
      kernels::rnn::RnnOptions f;
      f.step_mode = StepMode::cooperative;
      f.cooperative_tiling = t;
      variants.push_back({fmt::format("coop{}r{}q{}{}", t.units, t.rows, t.slice_vectors,
                                      t.row_chunks > 1 ? fmt::format("c{}", t.row_chunks) : ""),
                          f});
    }
  }
  std::string line = "    variants ms:";
  double best = 1e30;
  std::string best_name;
  for (const Variant& v : variants) {
    if (!std::regex_search(v.name, filter)) continue;
    try {
      const LayerTimes r = time_layer(context, pool, pipelines, c, repeats, v.options, false);
      line += fmt::format(" {}={:.3f}", v.name, r.gpu_ms);
      if (r.gpu_ms > 0 && r.gpu_ms < best) {
        best = r.gpu_ms;
        best_name = v.name;
      }
    } catch (const std::exception&) {
      line += fmt::format(" {}=n/a", v.name);
    }
  }
  fmt::print("{}\n    best {} {:.3f} ms{}\n", line, best_name, best,
             c.cudnn_ms > 0 ? fmt::format(" = {:.2f} x cuDNN", best / c.cudnn_ms) : "");
  std::fflush(stdout);
}

// --case CELL,DIRS,T,B,I,H (CELL lstm | gru | gru0 for linear_before_reset = 0, DIRS uni | bi): a
// shape outside rnn_cases.h, e.g. the batch or hidden size swept around a model's layer.
bench::RnnCase parse_case(const std::string& spec) {
  std::vector<std::string> f;
  size_t start = 0;
  for (size_t comma; (comma = spec.find(',', start)) != std::string::npos; start = comma + 1) {
    f.push_back(spec.substr(start, comma - start));
  }
  f.push_back(spec.substr(start));
  const auto bad = [&] { return std::invalid_argument(fmt::format("--case '{}': expected CELL,DIRS,T,B,I,H with CELL lstm | gru | gru0 and DIRS uni | bi", spec)); };
  if (f.size() != 6 || (f[0] != "lstm" && f[0] != "gru" && f[0] != "gru0") || (f[1] != "uni" && f[1] != "bi")) throw bad();
  bench::RnnCase c;
  c.lstm = f[0] == "lstm";
  c.linear_before_reset = f[0] == "gru";
  c.bidirectional = f[1] == "bi";
  int64_t* dims[] = {&c.seq, &c.batch, &c.input, &c.hidden};
  for (int d = 0; d < 4; ++d) {
    size_t used = 0;
    try {
      *dims[d] = std::stoll(f[2 + d], &used);
    } catch (const std::exception&) {
      throw bad();
    }
    if (used != f[2 + d].size() || *dims[d] < 1) throw bad();
  }
  c.name = fmt::format("{} {} T{} B{} I{} H{}", f[0], f[1], c.seq, c.batch, c.input, c.hidden);
  c.cudnn_ms = 0;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, sweep = false, no_variants = false;
  int repeats = 10, floor_steps = 2000;
  std::string only;
  std::string variant_filter;
  std::vector<bench::RnnCase> custom;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--quick") quick = true;
    else if (a == "--sweep") sweep = true;
    else if (a == "--no-variants") no_variants = true;
    else if (a == "--repeats" && has_value) repeats = std::stoi(argv[++i]);
    else if (a == "--floor-steps" && has_value) floor_steps = std::stoi(argv[++i]);
    else if (a == "--only" && has_value) only = argv[++i];
    else if (a == "--variants" && has_value) variant_filter = argv[++i];
    else if (a == "--tuning" && has_value) ++i;  // (tuning_from_args reads it)
    else if (a == "--case" && has_value) {
      try {
        custom.push_back(parse_case(argv[++i]));
      } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "bench_rnn: {}\n", e.what());
        return 2;
      }
    } else {
      fmt::print(stderr,
                 "usage: bench_rnn [--quick] [--repeats R] [--floor-steps N] [--only SUBSTRING] [--sweep] "
                 "[--no-variants] [--variants REGEX] [--case CELL,DIRS,T,B,I,H ...] [--tuning "
                 "rnn.FIELD=VALUE ...]\n");
      return 2;
    }
  }
  g_tuning = bench::tuning_from_args(argc, argv);
  // A malformed REGEX fails here, once, rather than as every case's error.
  std::regex filter;
  try {
    filter = std::regex(variant_filter);
  } catch (const std::regex_error& e) {
    fmt::print(stderr, "bench_rnn: --variants '{}' is not a regular expression: {}\n", variant_filter, e.what());
    return 2;
  }
  if (quick) {
    repeats = std::min(repeats, 3);
    floor_steps = std::min(floor_steps, 64);
  }
  gpu::Context context;
  gpu::BufferPool pool(context);
  gpu::PipelineCache pipelines(context);
  fmt::print("adapter: {} ({}), repeats {}{}\n", context.adapter_description().name, context.adapter_description().backend,
             repeats, quick ? ", --quick shapes" : "");
  if (!context.has(gpu::Feature::TimestampQuery)) fmt::print("no timestamp queries: gpu columns are -1\n");
  // The H200 idles at 345 MHz; the steps alone are too light to raise its clocks.
  gpu::warm_up_clocks(context, pool, quick ? 0.1 : 1.0);

  const Floor floor = measure_floor(context, pool, pipelines, floor_steps, repeats);
  fmt::print("dispatch floor: {:.2f} us GPU, {:.2f} us wall per dependent dispatch ({} in one compute pass)\n\n",
             floor.gpu_us, floor.wall_us, floor_steps);

  fmt::print(
      "{:<26} {:>5} {:>4} {:>4} {:>4} {:>6} {:>9} {:>9} {:>9} {:>9} {:>8} {:>10} {:>9} {:>8} {:>9} {:>8}\n",
      "case", "T", "B", "I", "H", "kernel", "disp/step", "gpu ms", "wall ms", "sub ms", "us/step",
      "floor/step", "kernel us", "proj ms", "before ms", "cuDNN ms", "x cuDNN");
  for (const bench::RnnCase& c : custom.empty() ? bench::rnn_cases(quick) : custom) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    try {
      const LayerTimes t = time_layer(context, pool, pipelines, c, repeats, {}, true);
      kernels::rnn::RnnOptions wide;
      wide.step_mode = kernels::rnn::StepMode::per_step;
      wide.step_kernel = kernels::rnn::StepKernel::dot;
      wide.step_tiling = kernels::rnn::StepTiling{64, c.hidden >= 64 ? 4u : 1u,
                                                  static_cast<uint32_t>(std::min<int64_t>(c.batch, 4)), 64};
      const LayerTimes w = time_layer(context, pool, pipelines, c, repeats, wide, false);
      const double per_step = static_cast<double>(t.dispatches - t.projection_dispatches) / static_cast<double>(c.seq);
      const bool on_gpu = context.adapter_description().type != "CPU";
      const char* kernel = per_step < 0.5                                ? "seq"
                           : per_step > 1.5 ? (c.batch >= kernels::rnn::kGemmStepMinBatch ? "gemm" : "2-phase")
                           : c.batch >= kernels::rnn::kVec4StepMinBatch && on_gpu ? "vec4"
                           : c.batch >= kernels::rnn::kTiledMinBatch     ? "tiled"
                                                                         : "dot";
      fmt::print(
          "{:<26} {:>5} {:>4} {:>4} {:>4} {:>6} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>8.2f} {:>10.2f} "
          "{:>9.2f} {:>8.3f} {:>8.3f} {:>9} {:>8}\n",
          c.name, c.seq, c.batch, c.input, c.hidden, kernel, per_step, t.gpu_ms, t.wall_ms, t.submit_ms,
          t.gpu_ms * 1e3 / c.seq, floor.gpu_us * per_step, t.step_kernel_us, t.projection_ms, w.gpu_ms,
          c.cudnn_ms > 0 ? fmt::format("{:.2f}", c.cudnn_ms) : "-",
          c.cudnn_ms > 0 && t.gpu_ms > 0 ? fmt::format("{:.2f}", t.gpu_ms / c.cudnn_ms) : "-");
      if (!no_variants) time_variants(context, pool, pipelines, c, repeats, sweep, filter);
      if (sweep && std::regex_search("dot", filter)) sweep_tilings(context, pool, pipelines, c, std::max(1, repeats / 2));
    } catch (const std::exception& e) {
      fmt::print("{:<26} failed: {}\n", c.name, e.what());
    }
  }
  return 0;
}
