// GEMM throughput on the current adapter (GPU time from timestamp queries). Skipped unless
// ONDA_GEMM_BENCH=1: it is a measurement, not a check (correctness lives in test_gemm.cpp), though
// each shape is also compared with a float64 reference on a few sampled outputs.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "gpu/command_recorder.h"
#include "gpu/profiler.h"
#include "harness.h"
#include "kernels/gemm/gemm.h"
#include "kernels/gemm/packed_b.h"

namespace onda::test {
namespace {

using namespace kernels::gemm;

bool bench_enabled() {
  return std::getenv("ONDA_GEMM_BENCH") != nullptr;
}

// Runs `plan` `reps` times; returns GPU milliseconds per run.
double time_gemm(const Gemm& plan, const GemmTensors& t, int reps) {
  auto& g = gpu();
  {  // warm-up (pipeline creation, first-touch)
    gpu::CommandRecorder recorder(g.context);
    plan.record(g.context, g.pipelines, recorder, t);
    recorder.submit_and_wait();
  }
  gpu::Profiler profiler(g.context);
  gpu::CommandRecorder recorder(g.context, &profiler);
  for (int i = 0; i < reps; ++i) plan.record(g.context, g.pipelines, recorder, t);
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

TEST(GemmBench, TiledSquare) {
  if (!bench_enabled()) GTEST_SKIP() << "set ONDA_GEMM_BENCH=1";
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
      const Gemm plan(g.context, p, options);
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
  if (!bench_enabled()) GTEST_SKIP() << "set ONDA_GEMM_BENCH=1";
  auto& g = gpu();
  Random random(test_seed());
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{16384, 512, 512}, {4096, 4096, 4096}}) {
    const auto a = random.normal(m * k), b = random.normal(k * n);
    const Tensor a_t = upload_floats(a, DType::f32, {m, k});
    // b holds op(B) row-major [K, N]; its transpose [N, K] for the transposed and packed forms.
    std::vector<float> b_nk(b.size());
    for (int64_t q = 0; q < k; ++q) {
      for (int64_t j = 0; j < n; ++j) b_nk[j * k + q] = b[q * n + j];
    }
    for (const char* form : {"B  ", "B^T", "packed"}) {
      const std::string f = form;
      const bool nk = f != "B  ";
      GemmTensors t;
      t.a = a_t;
      t.b = upload_floats(nk ? b_nk : b, DType::f32, nk ? Shape{n, k} : Shape{k, n});
      PackedB packed;
      GemmProblem p;
      if (f == "packed") {
        gpu::CommandRecorder recorder(g.context);
        packed = prepack_b(g.context, g.pool, g.pipelines, recorder, t.b, true);
        recorder.submit_and_wait();
        p = GemmProblem::with_packed_b({m, k}, DType::f32, false, packed);
        t.packed_b = &packed;
      } else {
        p.a_shape = {m, k};
        p.b_shape = t.b.shape();
        p.transpose_b = nk;
      }
      const Gemm plan(g.context, p);
      t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
      const double ms = time_gemm(plan, t, m * n * k >= (int64_t{1} << 36) ? 5 : 20);
      std::printf("  %5lldx%5lldx%5lld %-6s %-45s %8.3f ms %8.1f GFLOP/s  err %.1e\n", (long long)m,
                  (long long)n, (long long)k, form, plan.variant().describe().c_str(), ms,
                  2.0 * m * n * k / ms * 1e-6, sampled_rel_error(a, b, false, t.out, m, n, k));
      std::fflush(stdout);
    }
  }
}

TEST(GemmBench, SkinnyRecurrent) {
  if (!bench_enabled()) GTEST_SKIP() << "set ONDA_GEMM_BENCH=1";
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
          const Gemm plan(g.context, p, options);
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
