// Bandwidth of the layout kernels on large tensors against the device's buffer-copy ceiling
// (CopyBufferToBuffer of the same bytes), from GPU timestamps (median of repeats); lavapipe timings
// mean nothing, so on a real GPU:
//   build/bench_layout [--mib 512]
// Bytes = output written once + input read once (the minimum any kernel must move).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "gpu/profiler.h"
#include "gtest_bench.h"
#include "kernels/layout/expand_tile.h"
#include "kernels/layout/gather.h"
#include "kernels/layout/pad.h"
#include "kernels/layout/resize.h"
#include "kernels/layout/slice.h"
#include "kernels/layout/transpose.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

template <typename Record>
double median_gpu_ms(Record record, int repeats = 9) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    gpu::Profiler profiler(gpu().context, 16);
    gpu::CommandRecorder recorder(gpu().context, &profiler);
    record(recorder);
    recorder.submit_and_wait();
    times.push_back(profiler.total_ms());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void report(const std::string& what, double bytes, double ms, double ceiling_gbs) {
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  std::printf("%-44s %8.3f ms %8.1f GB/s (%3.0f%% of copy)\n", what.c_str(), ms, gbs,
              100 * gbs / ceiling_gbs);
}

TEST(LayoutBench, Bandwidth) {
  const int64_t mib = bench::gtest_bench_flags().mib;
  const int64_t n = mib * (1 << 20) / 4;  // f32 elements
  auto& g = gpu();
  const kernels::KernelContext kc = layout_kc();
  std::printf("adapter: %s\n", g.context.adapter_description().name.c_str());

  Tensor a = Tensor::empty(g.pool, DType::f32, {n});
  Tensor b = Tensor::empty(g.pool, DType::f32, {n});
  // Copies get no timestamps: wall time of 10 copies in one submit.
  double copy_ms = 0;
  {
    gpu::CommandRecorder warm(g.context);
    warm.copy(a.buffer(), 0, b.buffer(), 0, n * 4);
    warm.submit_and_wait();
    gpu::CommandRecorder r(g.context);
    for (int k = 0; k < 10; ++k) r.copy(a.buffer(), 0, b.buffer(), 0, n * 4);
    const auto start = std::chrono::steady_clock::now();
    r.submit_and_wait();
    copy_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 10;
  }
  const double ceiling = 2.0 * n * 4 / (copy_ms * 1e-3) / 1e9;
  report("copy ceiling (CopyBufferToBuffer)", 2.0 * n * 4, copy_ms, ceiling);

  for (DType dtype : {DType::f32, DType::f16}) {
    const std::string t = std::string(" ") + std::string(dtype_name(dtype));
    const int64_t elements = dtype == DType::f16 ? 2 * n : n;
    const double bytes = 2.0 * n * 4;  // same byte count for both dtypes
    const int64_t m = 1024, cols = elements / (m * 16);
    Tensor in = Tensor::empty(g.pool, dtype, {16, m, cols});
    Tensor o1 = Tensor::empty(g.pool, dtype, {16, cols, m});
    const std::vector<int64_t> swap_last{0, 2, 1};
    report("Transpose [16,1024,N]->[16,N,1024] tiled" + t, bytes, median_gpu_ms([&](gpu::CommandRecorder& r) {
             kernels::record_transpose(kc, r, in, swap_last, o1);
           }),
           ceiling);
    Tensor o2 = Tensor::empty(g.pool, dtype, {m, 16, cols});
    const std::vector<int64_t> outer{1, 0, 2};
    report("Transpose [16,1024,N]->[1024,16,N] gather" + t, bytes,
           median_gpu_ms([&](gpu::CommandRecorder& r) { kernels::record_transpose(kc, r, in, outer, o2); }),
           ceiling);
    Tensor half_cols = Tensor::empty(g.pool, dtype, {16, m, cols / 2});
    const auto dims =
        kernels::plan_slice({16, m, cols}, std::vector<int64_t>{1}, std::vector<int64_t>{INT64_MAX},
                            std::vector<int64_t>{2}, std::vector<int64_t>{2});
    report("Slice step 2 on the last dim" + t, 0.75 * bytes,
           median_gpu_ms([&](gpu::CommandRecorder& r) { kernels::record_slice(kc, r, in, dims, half_cols); }),
           ceiling);
    Tensor p1 = Tensor::empty(g.pool, dtype, {16, m, cols / 2}),
           p2 = Tensor::empty(g.pool, dtype, {16, m, cols / 2});
    const std::vector<Tensor> parts{p1, p2};
    report("Concat 2 along the last dim" + t, bytes,
           median_gpu_ms([&](gpu::CommandRecorder& r) { kernels::record_concat(kc, r, parts, 2, in); }),
           ceiling);
    const std::vector<int64_t> pads{0, 0, 3, 0, 0, 5};
    Tensor padded = Tensor::empty(g.pool, dtype, {16, m, cols / 2 + 8});
    report("Pad reflect on the last dim" + t, bytes / 2, median_gpu_ms([&](gpu::CommandRecorder& r) {
             kernels::record_pad(kc, r, p1, pads, kernels::PadMode::Reflect, 0.0, padded);
           }),
           ceiling);
    Tensor row = Tensor::empty(g.pool, dtype, {1, m, cols / 2});
    report("Expand [1,1024,N] -> [16,1024,N]" + t, bytes / 2,
           median_gpu_ms([&](gpu::CommandRecorder& r) { kernels::record_expand(kc, r, row, p1); }), ceiling);
    Tensor small = Tensor::empty(g.pool, dtype, {16, m / 2, cols / 4});
    kernels::ResizeAttributes at;
    at.mode = kernels::ResizeMode::Linear;
    at.coordinates = kernels::ResizeCoordinates::AlignCorners;
    Tensor big = Tensor::empty(g.pool, dtype, {16, m, cols / 2});
    report("Resize linear 2x [16,512,N/4]->[16,1024,N/2]" + t, bytes / 2 * 1.125,
           median_gpu_ms([&](gpu::CommandRecorder& r) { kernels::record_resize(kc, r, small, at, big); }),
           ceiling);
  }
}

}  // namespace
}  // namespace onda::test
