#include "harness.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu/transfer.h"
#include "tensor/half.h"

namespace onda::test {

Gpu& gpu() {
  static Gpu instance;
  return instance;
}

namespace {

// The seed of the test running now: drawn at its first test_seed() call, returned again by the
// later ones, so that ONDA_TEST_SEED (which every call returns) replays the whole test.
struct CurrentSeed {
  const ::testing::TestInfo* test = nullptr;
  uint64_t seed = 0;
};
CurrentSeed& current_seed() {
  static CurrentSeed current;
  return current;
}

// Prints how to replay a failed test that drew a seed, after its failure messages: the line is
// there whatever the test's own messages say, and scripts/test.sh repeats it in its summary.
class SeedOnFailure : public ::testing::EmptyTestEventListener {
  // A fresh seed per run of a test, also under --gtest_repeat (the same TestInfo again).
  void OnTestStart(const ::testing::TestInfo&) override { current_seed().test = nullptr; }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    const CurrentSeed& c = current_seed();
    if (c.test == &info && info.result()->Failed()) {
      std::printf("replay: ONDA_TEST_SEED=%llu build/onda_tests --gtest_filter='%s.%s'\n",
                  static_cast<unsigned long long>(c.seed), info.test_suite_name(), info.name());
    }
  }
};
const bool seed_listener_added = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new SeedOnFailure);
  return true;
}();

}  // namespace

uint64_t test_seed() {
  CurrentSeed& c = current_seed();
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (test == nullptr || c.test != test) {
    uint64_t seed;
    if (const char* env = std::getenv("ONDA_TEST_SEED")) {
      seed = std::strtoull(env, nullptr, 10);
    } else {
      static std::random_device device;
      seed = (uint64_t{device()} << 32) | device();
    }
    c = {test, seed};
    if (test != nullptr) ::testing::Test::RecordProperty("seed", std::to_string(seed));
  }
  return c.seed;
}

std::vector<float> Random::normal(size_t n, double mean, double stddev) {
  std::normal_distribution<double> dist(mean, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(dist(engine_));
  return v;
}

std::vector<float> Random::uniform(size_t n, double low, double high) {
  std::uniform_real_distribution<double> dist(low, high);
  std::vector<float> v(n);
  for (auto& x : v) x = static_cast<float>(dist(engine_));
  return v;
}

int64_t Random::integer(int64_t low, int64_t high) {
  return std::uniform_int_distribution<int64_t>(low, high)(engine_);
}

double rel_l2(const std::vector<float>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i]) && std::isfinite(ref[i])) return INFINITY;
    if (std::isnan(out[i]) != std::isnan(ref[i])) return INFINITY;
    if (std::isinf(ref[i])) {
      if (out[i] != ref[i]) return INFINITY;
      continue;
    }
    if (std::isnan(ref[i])) continue;
    const double d = static_cast<double>(out[i]) - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  if (den == 0) return num == 0 ? 0.0 : INFINITY;
  return std::sqrt(num / den);
}

double max_abs_diff(const std::vector<float>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(ref[i]) && std::isnan(out[i])) continue;
    const double d = std::abs(static_cast<double>(out[i]) - ref[i]);
    if (std::isnan(d)) return INFINITY;
    m = std::max(m, d);
  }
  return m;
}

std::vector<int64_t> download_ints(const Tensor& t) {
  const std::vector<uint8_t> bytes = t.download_bytes(gpu().context);
  std::vector<int64_t> v(bytes.size() / 8);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

Moments moments(const std::vector<double>& v) {
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

Tensor poisoned(DType dtype, const Shape& shape) {
  Gpu& g = gpu();
  Tensor t = Tensor::empty(g.pool, dtype, shape);
  std::vector<uint8_t> poison((t.device_bytes() + 3) & ~uint64_t{3}, 0xFF);
  gpu::upload(g.context, t.buffer(), t.byte_offset(), poison.data(), poison.size());
  return t;
}

Tensor upload_floats(const std::vector<float>& values, DType dtype, const Shape& shape) {
  Gpu& g = gpu();
  if (dtype == DType::f32) return Tensor::upload(g.context, g.pool, dtype, shape, values.data());
  std::vector<uint16_t> halves(values.size());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = float_to_half(values[i]);
  return Tensor::upload(g.context, g.pool, DType::f16, shape, halves.data());
}

std::vector<float> round_to_dtype(const std::vector<float>& values, DType dtype) {
  if (dtype != DType::f16) return values;
  std::vector<float> r(values.size());
  for (size_t i = 0; i < values.size(); ++i) r[i] = half_to_float(float_to_half(values[i]));
  return r;
}

}  // namespace onda::test
