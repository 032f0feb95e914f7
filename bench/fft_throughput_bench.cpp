// Throughput of a few FFT shapes (build/bench_fft_throughput): GPU time per
// transform from the wall time of repeated submits, after one warm-up.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "gtest_bench.h"
#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

TEST(FftBench, Throughput) {
  Gpu& g = gpu();
  struct Case {
    int64_t n, batch;
    FftDomain domain;
  };
  for (const Case& c : {Case{512, 512, FftDomain::real_to_complex}, Case{1024, 256, FftDomain::complex},
                        Case{4096, 64, FftDomain::complex}, Case{1 << 16, 4, FftDomain::complex},
                        Case{1021, 64, FftDomain::complex}}) {
    const FftDescription d = dense_description(c.n, c.batch, c.domain, FftDirection::forward);
    Tensor input = Tensor::empty(g.pool, DType::f32, {dense_input_elements(d)});
    Tensor output = Tensor::empty(g.pool, DType::f32, {dense_output_elements(d)});
    FftKernel kernel(g.context, g.pool, g.pipelines, d);
    const int repeats = 5;
    gpu::CommandRecorder warm(g.context);
    kernel.record(warm, input, output);
    warm.submit_and_wait();
    const auto start = std::chrono::steady_clock::now();
    gpu::CommandRecorder recorder(g.context);
    for (int i = 0; i < repeats; ++i) kernel.record(recorder, input, output);
    recorder.submit_and_wait();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double flops = 5.0 * c.n * std::log2(static_cast<double>(c.n)) * c.batch * repeats;
    std::printf("%s: %.3f ms per batch, %.2f GFLOP/s (5 N log2 N)\n", kernel.plan().summary().c_str(),
                1e3 * seconds / repeats, flops / seconds * 1e-9);
  }
}

}  // namespace
}  // namespace onda::test
