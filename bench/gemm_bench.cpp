// GEMM throughput on the current adapter (GPU time from timestamp queries): build/bench_gemm
// [--smoke] [--gtest_filter=GemmBench.TileSweep] [--sweep "gemm.FIELD=V ..."]... [--shapes MxNxK:FORM,...].
// A measurement, not a check (correctness lives in tests/kernels/gemm/test_gemm.cpp), though each shape is
// also compared with a float64 reference on a few sampled outputs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "gemm_variants.h"
#include "gpu/clock_warmup.h"
#include "gpu/command_recorder.h"
#include "gpu/profiler.h"
#include "gtest_bench.h"
#include "harness.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/packed_b.h"
#include "kernels/kernel_tuning.h"

namespace onda::test {
namespace {

using namespace kernels::gemm;

kernels::KernelContext kc() {
  return {gpu().context, gpu().pipelines};
}

// --smoke (gtest_bench.h): the sweeps on shrunken shapes (batch 2, sizes capped at 160), to check the
// benchmark itself on a CPU adapter; the timings then mean nothing.
bool smoke() {
  return bench::gtest_bench_flags().smoke;
}
int64_t shrink(int64_t size, int64_t cap = 160) {
  return smoke() ? std::min(size, cap) : size;
}

// Runs `plan` `reps` times; returns GPU milliseconds per run.
double time_gemm(const Gemm& plan, const GemmTensors& t, int reps) {
  auto& g = gpu();
  gpu::warm_up_clocks(g.context, g.pool, 0.1);  // host-side work before this left the GPU idle
  {                                             // warm-up (pipeline creation, first-touch)
    gpu::CommandRecorder recorder(g.context);
    plan.record(recorder, t);
    recorder.submit_and_wait();
  }
  gpu::Profiler profiler(g.context);
  gpu::CommandRecorder recorder(g.context, &profiler);
  for (int i = 0; i < reps; ++i) plan.record(recorder, t);
  recorder.submit_and_wait();
  return profiler.total_ms() / reps;
}

// Sampled check of out against a float64 dot product (B given as [N, K] when transposed).
double sampled_rel_error(const std::vector<float>& a, const std::vector<float>& b, bool b_nk,
                         const Tensor& out, int64_t m, int64_t n, int64_t k) {
  const std::vector<float> c = out.download_floats(gpu().context);
  double num = 0, den = 0;
  for (int s = 0; s < 64; ++s) {
    const int64_t i = (s * 7919) % m, j = (s * 104729) % n;
    double ref = 0;
    for (int64_t q = 0; q < k; ++q) ref += double(a[i * k + q]) * (b_nk ? b[j * k + q] : b[q * n + j]);
    num += (c[i * n + j] - ref) * (c[i * n + j] - ref);
    den += ref * ref;
  }
  return std::sqrt(num / den);
}

// op(B) = b ([K, N] row-major) as the GEMM takes it in `form`: "B" row-major, "B^T" the transpose
// b_nk ([N, K]) with transpose_b, "packed" b_nk prepacked. Fills t.b (and t.packed_b, pointing at
// `packed`) and returns the problem for A [M, K].
GemmProblem b_operand(const std::string& form, const std::vector<float>& b, const std::vector<float>& b_nk,
                      int64_t m, int64_t n, int64_t k, GemmTensors& t, PackedB& packed) {
  auto& g = gpu();
  const bool nk = form != "B";
  t.b = upload_floats(nk ? b_nk : b, DType::f32, nk ? Shape{n, k} : Shape{k, n});
  if (form == "packed") {
    gpu::CommandRecorder recorder(g.context);
    packed = prepack_b(g.context, g.pool, g.pipelines, recorder, t.b, true);
    recorder.submit_and_wait();
    t.packed_b = &packed;
    return GemmProblem::with_packed_b({m, k}, DType::f32, false, packed);
  }
  GemmProblem p;
  p.a_shape = {m, k};
  p.b_shape = t.b.shape();
  p.transpose_b = nk;
  return p;
}

TEST(GemmBench, TiledSquare) {
  auto& g = gpu();
  Random random(test_seed());
  for (int64_t size : {512, 1024, 2048, 4096}) {
    for (bool tb : {false, true}) {
      const int64_t m = size, n = size, k = size;
      const auto a = random.normal(m * k), b = random.normal(k * n);
      GemmProblem p;
      p.a_shape = {m, k};
      p.b_shape = tb ? Shape{n, k} : Shape{k, n};
      p.transpose_b = tb;
      GemmOptions options;
      options.path = GemmPath::tiled;
      const Gemm plan(kc(), p, options);
      GemmTensors t;
      t.a = upload_floats(a, DType::f32, {m, k});
      t.b = upload_floats(b, DType::f32, p.b_shape);
      t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
      const double ms = time_gemm(plan, t, size >= 4096 ? 5 : 20);
      std::printf("  tiled %5lldx%5lldx%5lld B%s %-45s %8.3f ms %8.1f GFLOP/s  err %.1e\n", (long long)m,
                  (long long)n, (long long)k, tb ? "^T" : "  ", plan.variant().describe().c_str(), ms,
                  2.0 * m * n * k / ms * 1e-6, sampled_rel_error(a, b, tb, t.out, m, n, k));
      std::fflush(stdout);
    }
  }
}

// The model GEMMs: the ONNX op layer prepacks every constant weight (PackedB, K-contiguous), so
// conv / projection GEMMs with many rows run the tiled path on a prepacked B. Each shape is timed
// with B row-major, B transposed and B prepacked (automatic path choice, as the op layer plans it).
// Target on an H200: >= 25 TFLOP/s for M = 16384, N = K = 512 in every layout.
TEST(GemmBench, TiledModelShapesPrepacked) {
  auto& g = gpu();
  Random random(test_seed());
  // SCNet's band biLSTM input projections (T B x D G H x I: H256 B864, H512 B433) after the first two.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{16384, 512, 512},
                         {4096, 4096, 4096},
                         {85 * 864, 2048, 256},
                         {85 * 433, 4096, 512}}) {
    const auto a = random.normal(m * k), b = random.normal(k * n);
    const Tensor a_t = upload_floats(a, DType::f32, {m, k});
    // b holds op(B) row-major [K, N]; its transpose [N, K] for the transposed and packed forms.
    std::vector<float> b_nk(b.size());
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t j = 0; j < n; ++j) b_nk[j * k + q] = b[q * n + j];
    }
    for (const char* form : {"B", "B^T", "packed"}) {
      GemmTensors t;
      t.a = a_t;
      PackedB packed;
      const GemmProblem p = b_operand(form, b, b_nk, m, n, k, t, packed);
      const Gemm plan(kc(), p);
      t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
      const double ms = time_gemm(plan, t, m * n * k >= (int64_t{1} << 36) ? 5 : 20);
      std::printf("  %5lldx%5lldx%5lld %-6s %-45s %8.3f ms %8.1f GFLOP/s  err %.1e\n", (long long)m,
                  (long long)n, (long long)k, form, plan.variant().describe().c_str(), ms,
                  2.0 * m * n * k / ms * 1e-6, sampled_rel_error(a, b, false, t.out, m, n, k));
      std::fflush(stdout);
    }
  }
}

// ---- variant sweeps ------------------------------------------------------------------------------
// Each shape runs its automatic plan ("auto"), the plan before this sweep existed where it differs
// ("old"), and every configuration below that the shader can run on the operand layout ("var"), so
// one invocation compares tile shapes on the GPU at hand. Every line is checked on 64 sampled
// outputs against a float64 dot product (err).

GemmVariant skinny_variant(uint32_t ks, uint32_t nt, uint32_t mv, bool subgroup, bool swap) {
  GemmVariant v;
  v.path = GemmPath::skinny;
  v.ks = ks;
  v.nc = std::max<uint32_t>(256 / ks, 1);
  v.nt = nt;
  v.mv = mv;
  v.subgroup_reduce = subgroup;
  v.swap_operands = swap;
  return v;
}

// Tile shapes {WG_X, WG_Y, TM, BK, GROUP_M}: BM = WG_Y * TM rows, BN = 4 * WG_X columns.
std::vector<GemmVariant> tiled_sweep(int64_t m, int64_t n) {
  const uint32_t shapes[][6] = {
      {16, 16, 8, 16, 0, 1}, {16, 16, 8, 16, 8, 1}, {16, 16, 8, 32, 0, 1},
      {16, 16, 8, 32, 8, 1},                                                // 128 x 64
      {32, 16, 8, 16, 0, 1}, {32, 16, 8, 16, 8, 1},                         // 128 x 128
      {16, 16, 8, 16, 0, 2}, {16, 16, 8, 16, 8, 2}, {16, 16, 8, 32, 8, 2},  // 128 x 128, 8 x 8 per thread
      {32, 8, 8, 16, 0, 1},                                                 // 64 x 128
      {16, 16, 4, 16, 0, 1}, {16, 16, 4, 32, 0, 1},                         // 64 x 64
      {16, 8, 4, 16, 0, 1},                                                 // 32 x 64
      {8, 16, 8, 16, 0, 1},  {8, 16, 4, 16, 0, 1},  {8, 16, 4, 32, 0, 1},
      {8, 8, 4, 8, 0, 1},                                                  // 128/64/32 x 32
      {4, 16, 8, 16, 0, 1},  {4, 16, 4, 16, 0, 1},  {4, 16, 4, 32, 0, 1},  // 128/64 x 16
  };
  std::vector<GemmVariant> out;
  for (const auto& s : shapes) {
    const int64_t bm = int64_t{s[1]} * s[2], bn = int64_t{s[0]} * 4 * s[5];
    // Skip tiles mostly padding on this shape, and narrow ones on wide problems (slow, not informative).
    if (bn > 2 * std::max<int64_t>(n, 16) || bm > 2 * std::max<int64_t>(m, 32) || (bn < 64 && n >= 256))
      continue;
    // the k loop as this adapter's own plans have it
    out.push_back(
        tiled_variant(s[0], s[1], s[2], s[3], s[4], s[5], gpu().context.adapter_description().type != "CPU"));
  }
  return out;
}

struct SweepResult {
  std::string tag, variant;
  double ms = 0;
};

// Times `problem` under automatic planning, `old` (when given) and each of `variants` on the given
// operands (host copies a_host / b_host as stored, for the sampled check). Prints one line per plan
// (all, or the automatic ones and the `top` fastest when top > 0) and the best.
void sweep(const std::string& label, const GemmProblem& problem, const GemmTensors& tensors,
           const std::vector<float>& a_host, const std::vector<float>& b_host,
           const std::optional<GemmVariant>& old, const std::vector<GemmVariant>& variants, size_t top = 0) {
  auto& g = gpu();
  const Gemm automatic(kc(), problem);
  const MatmulLayout& l = automatic.layout();
  const int64_t m = l.m, n = l.n, k = l.k, batch = l.batch_count;
  const double flop = 2.0 * batch * m * n * k;
  const int reps = static_cast<int>(std::clamp(4e10 / flop, 5.0, 50.0));
  // Sampled float64 check: A stored [batch, M, K]; B [batch or 1, K, N] or [.., N, K] when transposed.
  const bool b_batched = static_cast<int64_t>(b_host.size()) > k * n;
  auto check = [&](const Tensor& out) {
    const std::vector<float> c = out.download_floats(g.context);
    double num = 0, den = 0;
    for (int s = 0; s < 64; ++s) {
      const int64_t bi = (s * 31) % batch, i = (s * 7919) % m, j = (s * 104729) % n;
      const float* a = a_host.data() + bi * m * k;
      const float* b = b_host.data() + (b_batched ? bi * k * n : 0);
      double ref = 0;
      for (int64_t q = 0; q < k; ++q) {
        ref +=
            double(a[i * k + q]) * (problem.transpose_b || problem.b_prepacked ? b[j * k + q] : b[q * n + j]);
      }
      const double got = c[(bi * m + i) * n + j];
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
    return std::sqrt(num / std::max(den, 1e-30));
  };
  std::vector<SweepResult> results;
  auto run = [&](const char* tag, const GemmOptions& options) {
    std::optional<Gemm> plan;
    try {
      plan.emplace(kc(), problem, options);
    } catch (const std::exception&) {
      return;  // a configuration this layout or device cannot run
    }
    GemmTensors t = tensors;
    t.out = Tensor::empty(g.pool, DType::f32, plan->output_shape());
    const double ms = time_gemm(*plan, t, reps);
    const double err = check(t.out);
    results.push_back({tag, plan->variant().describe(), ms});
    const bool print = top == 0 || std::string(tag) != "var";
    if (print) {
      std::printf("  %-34s %-4s %-52s %9.4f ms %7.2f TFLOP/s  err %.1e\n", label.c_str(), tag,
                  plan->variant().describe().c_str(), ms, flop / ms * 1e-9, err);
      std::fflush(stdout);
    }
  };
  run("auto", {});
  if (old && old->describe() != automatic.variant().describe()) {
    GemmOptions o;
    o.variant = *old;
    run("old", o);
  }
  for (const GemmVariant& v : variants) {
    GemmOptions o;
    o.variant = v;
    run("var", o);
  }
  std::sort(results.begin(), results.end(), [](const auto& x, const auto& y) { return x.ms < y.ms; });
  if (top > 0) {
    for (size_t i = 0; i < std::min(top, results.size()); ++i) {
      std::printf("  %-34s top  %-52s %9.4f ms %7.2f TFLOP/s\n", label.c_str(), results[i].variant.c_str(),
                  results[i].ms, flop / results[i].ms * 1e-9);
    }
  }
  if (!results.empty()) {
    std::printf("  %-34s BEST %-52s %9.4f ms %7.2f TFLOP/s\n\n", label.c_str(), results[0].variant.c_str(),
                results[0].ms, flop / results[0].ms * 1e-9);
  }
  std::fflush(stdout);
}

// A batched product [batch, M, K] x [batch, K, N] (B stored [batch, N, K] when transposed).
void sweep_batched(const std::string& label, int64_t batch, int64_t m, int64_t n, int64_t k, bool transpose_b,
                   const std::optional<GemmVariant>& old, const std::vector<GemmVariant>& variants) {
  batch = shrink(batch, 2);
  m = shrink(m);
  n = shrink(n);
  k = shrink(k);
  Random random(test_seed());
  const std::vector<float> a = random.normal(batch * m * k), b = random.normal(batch * k * n);
  GemmProblem p;
  p.a_shape = {batch, m, k};
  p.b_shape = transpose_b ? Shape{batch, n, k} : Shape{batch, k, n};
  p.transpose_b = transpose_b;
  GemmTensors t;
  t.a = upload_floats(a, DType::f32, p.a_shape);
  t.b = upload_floats(b, DType::f32, p.b_shape);
  sweep(smoke() ? fmt::format("{} (smoke {}x{}x{}x{})", label, batch, m, n, k) : label, p, t, a, b, old,
        variants);
}

// Attention products of the reference models (shapes from their ONNX graphs):
//   MP-SENet (1 x 201 x 321 input, 64 channels, 4 heads of 16, 101 frequency rows after the encoder):
//     freq_transformer: sequence 321 frames, batch 101 x 4 heads; time_transformer: sequence 101,
//     batch 321 x 4. MatMul_1 = Q K^T ([.., L, 16] x [.., 16, L]), MatMul_2 = softmax(QK^T) V
//     ([.., L, L] x [.., L, 16], V row-major). MatMul_2 used to take the swapped skinny path
//     (2.77 ms for the freq one on an H200).
//   HTDemucs: 8 heads, sequence 2688, head size 64.
TEST(GemmBench, AttentionShapes) {
  const uint32_t sg = gpu().context.subgroup_max_size();
  const bool sg_ok = gpu().context.has(gpu::Feature::Subgroups) && sg == gpu().context.subgroup_min_size();
  // The plan before this change for softmax(QK^T) V with N = 16: C^T = V^T softmax^T on the skinny path.
  const GemmVariant old_av = skinny_variant(sg_ok ? sg : 32, 1, 2, sg_ok, true);
  sweep_batched("mpsenet freq AV 404x[321x321]x[321x16]", 404, 321, 16, 321, false, old_av,
                tiled_sweep(321, 16));
  sweep_batched("mpsenet freq QK 404x[321x16]x[16x321]", 404, 321, 321, 16, false, std::nullopt,
                tiled_sweep(321, 321));
  sweep_batched("mpsenet time AV 1284x[101x101]x[101x16]", 1284, 101, 16, 101, false, old_av,
                tiled_sweep(101, 16));
  sweep_batched("mpsenet time QK 1284x[101x16]x[16x101]", 1284, 101, 101, 16, false, std::nullopt,
                tiled_sweep(101, 101));
  sweep_batched("htdemucs AV 8x[2688x2688]x[2688x64]", 8, 2688, 64, 2688, false, std::nullopt,
                tiled_sweep(2688, 64));
  sweep_batched("htdemucs QK 8x[2688x64]x[64x2688]", 8, 2688, 2688, 64, false, std::nullopt,
                tiled_sweep(2688, 2688));
}

// Issue 4's targets on an H200: M = 16384, N = K = 512 >= 25 TFLOP/s in every layout; B^T at 4096^3
// as fast as row-major (33 TFLOP/s); M = 16..64, N = 2048, K = 512 under 0.03 ms.
TEST(GemmBench, TileSweep) {
  Random random(test_seed());
  for (auto [m0, n0, k0] : {std::tuple<int64_t, int64_t, int64_t>{16384, 512, 512}, {4096, 4096, 4096}}) {
    const int64_t m = shrink(m0, 320), n = shrink(n0), k = shrink(k0);
    const auto a = random.normal(m * k), b = random.normal(k * n);
    std::vector<float> b_nk(b.size());
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t j = 0; j < n; ++j) b_nk[j * k + q] = b[q * n + j];
    }
    const Tensor a_t = upload_floats(a, DType::f32, {m, k});
    for (const std::string form : {"B", "B^T", "packed"}) {
      const bool nk = form != "B";
      GemmTensors t;
      t.a = a_t;
      PackedB packed;
      const GemmProblem p = b_operand(form, b, b_nk, m, n, k, t, packed);
      const std::string label = fmt::format("{}x{}x{} {}", m, n, k, form);
      // B^T / packed hosts hold [N, K]; the check reads them so.
      sweep(label, p, t, a, nk ? b_nk : b, std::nullopt, tiled_sweep(m, n));
    }
  }
}

// ---- tuning sweep (issue 33: the float32 GEMM rate) --------------------------------------------
// Every shape runs under the default tuning ("auto") and under each configuration: a set of gemm.*
// tuning assignments (kernels::set_tuning; GemmTuning in src/kernels/gemm/gemm_tuning.h), planned as a
// session plans with that tuning (a tile the shape or device cannot take leaves the automatic one: the
// line's variant says what ran). `--sweep "..."` (repeatable) replaces the built-in list and
// `--shapes MxNxK:FORM,...` the shapes; it runs only when asked for (the filter names it, or either flag
// is given). Lines "sweep" per run, then "sweep-table" (TFLOP/s, configs x
// shapes) and "sweep-best" per shape; bench/torch_matmul.py times the same shapes on cuBLAS.

struct SweepShape {
  int64_t m, n, k;
  std::string form;  // B, B^T or packed (b_operand)
  std::string what;
};

// What each configuration changes (gemm_tiled.wgsl): tile = WGX,WGY,TM,BK,NV,GROUP_M (128 x 128 with
// 8 x 8 outputs per thread = 16,16,8,BK,2,G; 128 x 64 with 8 x 8 = 8,16,8,BK,2,G; 128 x 64 with 16 x 4 =
// 16,8,16,BK,1,G; 128 outputs per thread as cuBLAS's FFMA kernels: 128 x 128 with 16 x 8 = 16,8,16,BK,2,G
// or 8 x 16 = 8,16,8,BK,4,G, 256 x 128 with 16 x 8 = 16,16,16,BK,2,G), double_buffer = two
// staged copies with the next K step prefetched into registers (one barrier per K step), for_unroll =
// the register block written out by #for, vec_store = 16-byte output stores, unroll_k=0 = the k loop of
// a K step kept a loop (instruction cache).
const char* const kDefaultSweep[] = {
    "gemm.for_unroll=1",
    "gemm.double_buffer=1",
    "gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,16,2,8",
    "gemm.tile=16,16,8,16,2,8 gemm.for_unroll=1",
    "gemm.tile=16,16,8,16,2,8 gemm.double_buffer=1",
    "gemm.tile=16,16,8,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1 gemm.vec_store=1",
    "gemm.tile=16,16,8,16,2,0 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,8,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,32,2,8 gemm.for_unroll=1",
    "gemm.tile=8,16,8,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=8,16,8,32,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,8,8,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,16,1,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,32,1,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=32,16,8,16,1,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,8,16,16,1,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,8,16,8,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,8,16,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=8,16,8,8,4,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,16,8,2,8 gemm.double_buffer=1 gemm.for_unroll=1",
    "gemm.tile=16,16,8,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1 gemm.unroll_k=0",
    "gemm.tile=16,8,16,16,2,8 gemm.double_buffer=1 gemm.for_unroll=1 gemm.unroll_k=0",
};

std::vector<SweepShape> sweep_shapes() {
  const std::string& list = bench::gtest_bench_flags().shapes;
  if (list.empty()) {
    return {{4096, 4096, 4096, "B", "square"},
            {4096, 4096, 4096, "B^T", "square"},
            {49662, 2048, 512, "packed", "BS-RoFormer FFN up (as MatMul runs it)"},
            {49662, 2048, 512, "B", "BS-RoFormer FFN up"},
            {49662, 512, 2048, "packed", "BS-RoFormer FFN down"},
            {16384, 512, 512, "B", "SCNet-like projection"},
            {16384, 512, 512, "packed", "SCNet-like projection"},
            {16384, 256, 2304, "packed", "conv-like 3x3 256->256, 128x128 positions"},
            {65536, 128, 576, "packed", "conv-like 3x3 64->128, 256x256 positions"}};
  }
  std::vector<SweepShape> out;
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    SweepShape s{0, 0, 0, "", "--shapes"};
    char x1 = 0, x2 = 0, colon = 0;
    std::istringstream one(item);
    if (!(one >> s.m >> x1 >> s.n >> x2 >> s.k >> colon >> s.form) || x1 != 'x' || x2 != 'x' ||
        colon != ':' || s.m <= 0 || s.n <= 0 || s.k <= 0 ||
        (s.form != "B" && s.form != "B^T" && s.form != "packed")) {
      std::fprintf(stderr, "--shapes: '%s' is not MxNxK:FORM (FORM B, B^T or packed)\n", item.c_str());
      std::exit(1);
    }
    out.push_back(s);
  }
  return out;
}

TEST(GemmBench, TuningSweep) {
  // Opt-in (a few minutes on a GPU; `measure.sh gemm` runs every other case within its time limit): only
  // when the filter names it or --sweep / --shapes are given.
  const auto& flags = bench::gtest_bench_flags();
  if (GTEST_FLAG_GET(filter).find("TuningSweep") == std::string::npos && flags.sweep.empty() &&
      flags.shapes.empty()) {
    GTEST_SKIP() << "opt-in: --gtest_filter=GemmBench.TuningSweep";
  }
  auto& g = gpu();
  std::vector<std::string> configs{"auto"};
  if (flags.sweep.empty()) {
    configs.insert(configs.end(), std::begin(kDefaultSweep), std::end(kDefaultSweep));
  } else {
    configs.insert(configs.end(), flags.sweep.begin(), flags.sweep.end());
  }
  std::vector<kernels::gemm::GemmTuning> tunings;
  for (const std::string& config : configs) {
    kernels::KernelTuning tuning;
    std::istringstream words(config == "auto" ? "" : config);
    for (std::string w; words >> w;) {
      try {
        kernels::set_tuning(tuning, w);
      } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "--sweep \"%s\": %s\n", config.c_str(), e.what());
        std::exit(1);
      }
    }
    tunings.push_back(tuning.gemm);
  }
  const std::vector<SweepShape> shapes = sweep_shapes();
  std::vector<std::vector<double>> tflops(configs.size(), std::vector<double>(shapes.size(), 0));
  Random random(test_seed());
  for (size_t si = 0; si < shapes.size(); ++si) {
    const SweepShape& shape = shapes[si];
    const int64_t m = shrink(shape.m, 320), n = shrink(shape.n), k = shrink(shape.k);
    const auto a = random.normal(m * k), b = random.normal(k * n);
    std::vector<float> b_nk(b.size());
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t j = 0; j < n; ++j) b_nk[j * k + q] = b[q * n + j];
    }
    GemmTensors t;
    t.a = upload_floats(a, DType::f32, {m, k});
    PackedB packed;
    const GemmProblem p = b_operand(shape.form, b, b_nk, m, n, k, t, packed);
    const double flop = 2.0 * m * n * k;
    const int reps = static_cast<int>(std::clamp(4e10 / flop, 5.0, 50.0));
    const std::string label = fmt::format("S{} {}x{}x{} {}", si + 1, m, n, k, shape.form);
    for (size_t ci = 0; ci < configs.size(); ++ci) {
      GemmOptions options;
      options.tuning = tunings[ci];
      std::optional<Gemm> plan;
      try {
        plan.emplace(kc(), p, options);
      } catch (const std::exception& e) {
        std::printf("  sweep %-28s %-86s refused: %s\n", label.c_str(), configs[ci].c_str(), e.what());
        continue;
      }
      t.out = Tensor::empty(g.pool, DType::f32, plan->output_shape());
      const double ms = time_gemm(*plan, t, reps);
      const double err = sampled_rel_error(a, b, false, t.out, m, n, k);
      t.out = Tensor();
      tflops[ci][si] = flop / ms * 1e-9;
      std::printf("  sweep %-28s %-86s %-64s %8.4f ms %6.2f TFLOP/s err %.1e%s\n", label.c_str(),
                  configs[ci].c_str(), plan->variant().describe().c_str(), ms, tflops[ci][si], err,
                  err > 1e-4 ? "  WRONG" : "");
      std::fflush(stdout);
    }
  }
  // The table: one row per configuration, one column per shape (TFLOP/s; 0 = refused).
  std::printf("\n");
  for (size_t si = 0; si < shapes.size(); ++si) {
    std::printf("  sweep-shape S%zu = %lldx%lldx%lld %s (%s)\n", si + 1, (long long)shapes[si].m,
                (long long)shapes[si].n, (long long)shapes[si].k, shapes[si].form.c_str(),
                shapes[si].what.c_str());
  }
  std::string header = fmt::format("  sweep-table {:<86}", "TFLOP/s");
  for (size_t si = 0; si < shapes.size(); ++si) header += fmt::format(" {:>6}", fmt::format("S{}", si + 1));
  std::printf("%s\n", header.c_str());
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    std::string row = fmt::format("  sweep-table {:<86}", configs[ci]);
    for (double v : tflops[ci]) row += fmt::format(" {:>6.2f}", v);
    std::printf("%s\n", row.c_str());
  }
  for (size_t si = 0; si < shapes.size(); ++si) {
    size_t best = 0;
    for (size_t ci = 1; ci < configs.size(); ++ci) {
      if (tflops[ci][si] > tflops[best][si]) best = ci;
    }
    std::printf("  sweep-best S%zu %6.2f TFLOP/s (auto %6.2f, x%.2f): %s\n", si + 1, tflops[best][si],
                tflops[0][si], tflops[0][si] > 0 ? tflops[best][si] / tflops[0][si] : 0.0,
                configs[best].c_str());
  }
  std::fflush(stdout);
}

TEST(GemmBench, SkinnySweep) {
  auto& g = gpu();
  Random random(test_seed());
  const uint32_t sg = g.context.subgroup_max_size();
  const bool sg_ok = g.context.has(gpu::Feature::Subgroups) && sg == g.context.subgroup_min_size();
  const int64_t n = shrink(2048, 512), k = shrink(512);
  const auto b = random.normal(n * k);
  for (int64_t m : {1, 4, 16, 32, 64}) {
    const auto a = random.normal(m * k);
    GemmProblem p;
    p.a_shape = {m, k};
    p.b_shape = {n, k};
    p.transpose_b = true;
    GemmTensors t;
    t.a = upload_floats(a, DType::f32, p.a_shape);
    t.b = upload_floats(b, DType::f32, p.b_shape);
    std::vector<GemmVariant> variants;
    for (uint32_t ks : {32u, 16u, 8u, 64u}) {
      for (uint32_t mv : {1u, 2u, 4u}) {
        for (uint32_t nt : {1u, 2u, 4u}) {
          if (4 * mv > 2 * std::max<int64_t>(m, 4)) continue;  // mostly empty row blocks
          variants.push_back(skinny_variant(ks, nt, mv, false, false));
          if (sg_ok && ks == sg) variants.push_back(skinny_variant(ks, nt, mv, true, false));
        }
      }
    }
    for (const GemmVariant& v : tiled_sweep(m, n)) variants.push_back(v);
    sweep(fmt::format("M={} N={} K={} B^T", m, n, k), p, t, a, b, std::nullopt, variants, 6);
  }
}

TEST(GemmBench, SkinnyRecurrent) {
  auto& g = gpu();
  Random random(test_seed());
  for (auto [n, k] : {std::pair<int64_t, int64_t>{2048, 512}, {8192, 4096}}) {
    const auto b = random.normal(n * k);
    const Tensor b_t = upload_floats(b, DType::f32, {n, k});
    for (int64_t m : {1, 4, 16, 17, 32, 48, 64}) {
      const auto a = random.normal(m * k);
      for (GemmPath path : {GemmPath::skinny, GemmPath::tiled}) {
        for (bool subgroups : {true, false}) {
          if (path == GemmPath::tiled && !subgroups) continue;
          GemmProblem p;
          p.a_shape = {m, k};
          p.b_shape = {n, k};
          p.transpose_b = true;
          GemmOptions options;
          options.path = path;
          options.allow_subgroups = subgroups;
          const Gemm plan(kc(), p, options);
          GemmTensors t;
          t.a = upload_floats(a, DType::f32, {m, k});
          t.b = b_t;
          t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
          const double ms = time_gemm(plan, t, 50);
          const double bytes = 4.0 * (n * k + m * k + m * n);
          std::printf("  M=%3lld N=%5lld K=%5lld %-45s %8.4f ms %8.1f GB/s %8.1f GFLOP/s err %.1e\n",
                      (long long)m, (long long)n, (long long)k, plan.variant().describe().c_str(), ms,
                      bytes / ms * 1e-6, 2.0 * m * n * k / ms * 1e-6,
                      sampled_rel_error(a, b, true, t.out, m, n, k));
          std::fflush(stdout);
        }
      }
    }
  }
}

}  // namespace
}  // namespace onda::test
