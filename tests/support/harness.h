// Test harness shared by every kernel test: one GPU context per test binary, seeded random inputs,
// float64 comparison helpers and output poisoning.
//
// Every kernel test: draws fresh random inputs (seed printed on failure), poisons the output
// buffer (NaN bit patterns) before the run so an unwritten element fails, runs the kernel, and
// compares against a float64 CPU reference with rel L2 = ||out - ref|| / ||ref||.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/context.h"
#include "gpu/pipeline_cache.h"
#include "kernels/kernel_context.h"
#include "tensor/tensor.h"

namespace onda::test {

// The process-wide GPU objects (adapter from ONDA_ADAPTER or the default).
struct Gpu {
  gpu::Context context;
  gpu::BufferPool pool{context};
  gpu::PipelineCache pipelines{context};
};
Gpu& gpu();

// The seed of the running test: ONDA_TEST_SEED if set, else a fresh one drawn at the test's first
// call and returned by its later calls. A failed test that drew one prints a line replaying it
// (`replay: ONDA_TEST_SEED=...`).
uint64_t test_seed();

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}
  std::vector<float> normal(size_t n, double mean = 0.0, double stddev = 1.0);
  std::vector<float> uniform(size_t n, double low, double high);
  int64_t integer(int64_t low, int64_t high);  // inclusive
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

// ||out - ref|| / ||ref|| in float64; NaN or infinity in `out` where `ref` is finite gives +inf.
double rel_l2(const std::vector<float>& out, const std::vector<double>& ref);
double max_abs_diff(const std::vector<float>& out, const std::vector<double>& ref);

// A tensor from the pool whose bytes are all 0xFF (a NaN in f32 and f16, -1 in integers), so a
// kernel that skips an element fails the comparison.
Tensor poisoned(DType dtype, const Shape& shape);

// Uploads float data as `dtype` (f32, or f16 rounded to nearest even).
Tensor upload_floats(const std::vector<float>& values, DType dtype, const Shape& shape);
// The values a float16 upload really holds (rounded), for references.
std::vector<float> round_to_dtype(const std::vector<float>& values, DType dtype);

// The shared device's kernel context, as the kernel tests call kernels.
inline kernels::KernelContext kc() { return {gpu().context, gpu().pipelines}; }

// The rel L2 an f32 kernel may be off its float64 reference.
inline constexpr double kF32Bound = 1e-6;

// An int64 tensor's values, downloaded.
std::vector<int64_t> download_ints(const Tensor& t);

// Sample mean and (unbiased) variance, for the random-number tests' statistics.
struct Moments {
  double mean = 0, variance = 0;
};
Moments moments(const std::vector<double>& v);

}  // namespace onda::test
