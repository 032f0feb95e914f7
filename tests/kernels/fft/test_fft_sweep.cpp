// The FFT engine's full correctness sweep, on the code path the adapter takes (unrolled on GPUs):
// every length 1..4096 forward and inverse, complex and real (r2c, c2r), batched; a sample of longer
// lengths (powers of two to 2^24, smooth composites, primes and prime-heavy lengths up to 2^20) forward,
// inverse and round trip; float16 on a sample. Bounds: rel L2 <= 1e-6 for N <= 2^16, 5e-6 above, 1e-3
// in float16. Minutes on a GPU (one pipeline per length and kind), far too long on a CPU adapter, so it
// runs only with ONDA_FFT_SWEEP set: ONDA_FFT_SWEEP=1 for all of it, =LO:HI for the every-length part over
// LO..HI alone (shards), =long for the long sample alone; ONDA_FFT_SWEEP_PATH=generic|unrolled runs it
// on that code path instead of the adapter's (e.g. the unrolled shaders on lavapipe). CI runs the
// representative subset of test_fft*.cpp instead.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "test_fft_reference.h"

namespace onda::test {
namespace {

using namespace fft_reference;

double bound_for(int64_t n, DType dtype) {
  if (dtype == DType::f16) return 1e-3;
  return n <= (int64_t{1} << 16) ? 1e-6 : 5e-6;
}

struct SweepRange {
  bool enabled = false;
  int64_t lo = 1, hi = 4096;
  bool long_lengths = true;
};

SweepRange sweep_range() {
  SweepRange r;
  const char* env = std::getenv("ONDA_FFT_SWEEP");
  if (!env || !*env) return r;
  r.enabled = true;
  const std::string v = env;
  if (v == "long") {
    r.lo = 1, r.hi = 0;
  } else if (const size_t colon = v.find(':'); colon != std::string::npos) {
    r.lo = std::stoll(v.substr(0, colon));
    r.hi = std::stoll(v.substr(colon + 1));
    r.long_lengths = false;
  }
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ONDA_FFT_SWEEP_PATH, else automatic (the adapter's path).
kernels::fft::FftCodePath sweep_code_path() {
  const char* env = std::getenv("ONDA_FFT_SWEEP_PATH");
  const std::string v = env ? env : "";
  if (v == "generic") return kernels::fft::FftCodePath::generic;
  if (v == "unrolled") return kernels::fft::FftCodePath::unrolled;
  if (!v.empty()) ADD_FAILURE() << "ONDA_FFT_SWEEP_PATH is '" << v << "', expected generic or unrolled";
  return kernels::fft::FftCodePath::automatic;
}

// Runs `cases` and checks each against its bound; returns the worst rel L2 over them.
double run_and_check(std::vector<FftCase> cases, DType dtype, Random& random) {
  for (FftCase& c : cases) c.tuning.code_path = sweep_code_path();
  std::vector<std::unique_ptr<FftKernel>> kernels;
  const std::vector<double> errors = run_fft_cases(cases, dtype, random, &kernels);
  double worst = 0.0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& d = cases[i].description;
    worst = std::max(worst, errors[i]);
    EXPECT_LE(errors[i], bound_for(d.length, dtype)) << kernels[i]->plan().summary();
  }
  return worst;
}

TEST(FftSweep, EveryLengthTo4096) {
  const SweepRange range = sweep_range();
  if (!range.enabled) GTEST_SKIP() << "set ONDA_FFT_SWEEP=1 (or LO:HI) for the full sweep";
  if (range.hi < range.lo) GTEST_SKIP() << "long lengths only";
  Random random(test_seed());
  const auto start = std::chrono::steady_clock::now();
  double worst[4] = {0, 0, 0, 0};
  const char* kinds[4] = {"c2c forward", "c2c inverse 1/N", "r2c", "c2r 1/N"};
  constexpr int64_t kGroup = 64;  // lengths per submit
  for (int64_t first = range.lo; first <= range.hi; first += kGroup) {
    std::vector<FftCase> per_kind[4];
    for (int64_t n = first; n <= std::min(range.hi, first + kGroup - 1); ++n) {
      per_kind[0].push_back(dense_case(n, 3, FftDomain::complex, FftDirection::forward));
      per_kind[1].push_back(dense_case(n, 2, FftDomain::complex, FftDirection::inverse, DType::f32, true));
      per_kind[2].push_back(dense_case(n, 3, FftDomain::real_to_complex, FftDirection::forward));
      per_kind[3].push_back(
          dense_case(n, 2, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true));
    }
    for (int k = 0; k < 4; ++k) worst[k] = std::max(worst[k], run_and_check(per_kind[k], DType::f32, random));
    if (::testing::Test::HasFailure()) break;
  }
  for (int k = 0; k < 4; ++k) {
    std::printf("sweep N=%lld..%lld %s: worst rel L2 %.3g\n", static_cast<long long>(range.lo),
                static_cast<long long>(range.hi), kinds[k], worst[k]);
  }
  std::printf("sweep N=%lld..%lld: %.1f s\n", static_cast<long long>(range.lo),
              static_cast<long long>(range.hi), seconds_since(start));
}

TEST(FftSweep, LongLengthsAndRoundTrips) {
  const SweepRange range = sweep_range();
  if (!range.enabled || !range.long_lengths) GTEST_SKIP() << "set ONDA_FFT_SWEEP=1 or =long";
  Gpu& g = gpu();
  Random random(test_seed());
  const auto start = std::chrono::steady_clock::now();
  // Powers of two 2^13..2^24; smooth composites (3^9, 5^7, 7^6, 2^10 3^5 5, 6^7); primes and
  // prime-heavy lengths (4099, 10007, 65537, 2^17 - 1, 2 * 65537, 2^19 - 1, 1000003) up to 2^20.
  std::vector<int64_t> lengths;
  for (int p = 13; p <= 24; ++p) lengths.push_back(int64_t{1} << p);
  for (int64_t n : {19683, 78125, 117649, 1244160, 279936}) lengths.push_back(n);
  for (int64_t n : {4099, 10007, 65537, 131071, 131074, 524287, 1000003}) lengths.push_back(n);
  for (const int64_t n : lengths) {
    const int64_t batch = std::max<int64_t>(1, (int64_t{1} << 21) / n);
    std::vector<FftCase> cases = {
        dense_case(n, batch, FftDomain::complex, FftDirection::forward),
        dense_case(n, batch, FftDomain::complex, FftDirection::inverse, DType::f32, true),
        dense_case(n, batch, FftDomain::real_to_complex, FftDirection::forward),
        dense_case(n, batch, FftDomain::complex_to_real, FftDirection::inverse, DType::f32, true)};
    // One submit for the four (their references computed in parallel) where their regions of the
    // shared input and output tensors fit a storage binding, else one per case; a length whose own
    // tensors exceed a binding (2^24 on a CPU adapter's 128 MiB) is reported and skipped.
    const uint64_t binding = g.context.limits().maxStorageBufferBindingSize;
    const uint64_t case_bytes = static_cast<uint64_t>(2 * n * batch) * 4 + 64;
    if (case_bytes > binding) {
      std::printf("long N=%lld: skipped, %llu bytes exceed this device's storage binding\n",
                  static_cast<long long>(n), static_cast<unsigned long long>(case_bytes));
      continue;
    }
    double worst = 0.0;
    if (4 * case_bytes <= binding) {
      worst = run_and_check(cases, DType::f32, random);
    } else {
      for (const FftCase& c : cases) worst = std::max(worst, run_and_check({c}, DType::f32, random));
    }

    // Round trips: inverse(forward(x)) / N == x, complex and real.
    std::string plan;
    const double round_trip =
        std::max(round_trip_error(n, batch, false, random, &plan), round_trip_error(n, batch, true, random));
    EXPECT_LE(round_trip, bound_for(n, DType::f32)) << plan;
    std::printf("long N=%lld x%lld %s: worst rel L2 %.3g, round trip %.3g (%.1f s)\n",
                static_cast<long long>(n), static_cast<long long>(batch), plan.substr(0, 60).c_str(), worst,
                round_trip, seconds_since(start));
    std::fflush(stdout);  // visible as it goes when a GPU call's timeout cuts the run short
  }
  // float16 storage (float32 inside) on a sample of kinds and lengths.
  std::vector<FftCase> f16;
  for (int64_t n : {256, 1000, 4096, 4099, 16384, 65537}) {
    f16.push_back(dense_case(n, 2, FftDomain::complex, FftDirection::forward, DType::f16));
    f16.push_back(dense_case(n, 2, FftDomain::real_to_complex, FftDirection::forward, DType::f16));
    f16.push_back(dense_case(n, 2, FftDomain::complex_to_real, FftDirection::inverse, DType::f16, true));
  }
  std::printf("f16 sample: worst rel L2 %.3g\n", run_and_check(f16, DType::f16, random));
}

}  // namespace
}  // namespace onda::test
