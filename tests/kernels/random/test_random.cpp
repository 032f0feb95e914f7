// The random kernel (kernels/random/random.h): its CPU twin of Philox4x32-10 against Random123's
// known-answer vectors, the GPU words bit-exact against the twin (uniform on [0, 1) returns them
// unchanged), and the distributions by statistics over 2^17 draws: mean and variance of uniform
// and normal draws within 5 standard errors (and the normal's CDF at +1 sigma), f16 outputs, and
// Bernoulli frequencies per probability, into float, int64 and bool outputs. Outputs are poisoned.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph/host_tensor.h"
#include "harness.h"
#include "kernels/random/random.h"

namespace onda::test {
namespace {

constexpr int64_t kDraws = 1 << 17;

std::vector<double> draw(const kernels::RandomDraw& d, DType dtype, int64_t n,
                         const Tensor* probabilities = nullptr) {
  const Tensor y = poisoned(dtype, {n});
  gpu::CommandRecorder recorder(gpu().context);
  kernels::record_random(kc(), recorder, d, probabilities, y);
  recorder.submit_and_wait();
  const std::vector<uint8_t> bytes = y.download_bytes(gpu().context);
  return HostTensor::copy_of(dtype, {n}, bytes.data(), bytes.size()).to_double();
}


TEST(Random, PhiloxKnownAnswers) {
  // Random123's kat_vectors for philox4x32_10: counter, key -> result.
  EXPECT_EQ(kernels::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(kernels::philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                                   {0xffffffffu, 0xffffffffu}),
            (std::array<uint32_t, 4>{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(kernels::philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                                   {0xa4093822u, 0x299f31d0u}),
            (std::array<uint32_t, 4>{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Random, GpuWordsMatchTheCpuGenerator) {
  Random rng(test_seed());
  kernels::RandomDraw d;
  d.key = {static_cast<uint32_t>(rng.engine()()), static_cast<uint32_t>(rng.engine()())};
  const int64_t n = 70000;  // 274 workgroups
  const std::vector<double> got = draw(d, DType::f32, n);
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t word = kernels::philox4x32_10({static_cast<uint32_t>(i), 0, 0, 0}, d.key)[0];
    ASSERT_EQ(got[i], static_cast<double>(word >> 8) / 16777216.0) << "element " << i;
  }
}

TEST(Random, UniformAndNormalMoments) {
  Random rng(test_seed());
  const double n = static_cast<double>(kDraws);
  for (DType dtype : {DType::f32, DType::f16}) {
    kernels::RandomDraw u;
    u.a = -2.0f;
    u.b = 3.0f;
    u.key = {static_cast<uint32_t>(rng.engine()()), 7};
    const std::vector<double> uniform = draw(u, dtype, kDraws);
    const Moments mu = moments(uniform);
    const double width = 5.0, var = width * width / 12.0;
    EXPECT_NEAR(mu.mean, 0.5, 5 * std::sqrt(var / n)) << dtype_name(dtype);
    EXPECT_NEAR(mu.variance, var, 5 * std::sqrt((std::pow(width, 4) / 80.0 - var * var) / n))
        << dtype_name(dtype);
    for (double v : uniform) ASSERT_TRUE(v >= -2.0 && v <= 3.0) << v;

    kernels::RandomDraw g;
    g.distribution = kernels::RandomDistribution::Normal;
    g.a = 1.5f;
    g.b = 0.25f;
    g.key = {static_cast<uint32_t>(rng.engine()()), 9};
    const std::vector<double> normal = draw(g, dtype, kDraws);
    const Moments mn = moments(normal);
    EXPECT_NEAR(mn.mean, 1.5, 5 * 0.25 / std::sqrt(n)) << dtype_name(dtype);
    EXPECT_NEAR(mn.variance, 0.0625, 5 * 0.0625 * std::sqrt(2.0 / n)) << dtype_name(dtype);
    double below = 0;
    for (double v : normal) {
      ASSERT_TRUE(std::isfinite(v));
      below += v < 1.75 ? 1 : 0;
    }
    const double p = 0.8413447460685429;  // Phi(1)
    EXPECT_NEAR(below / n, p, 5 * std::sqrt(p * (1 - p) / n)) << dtype_name(dtype);
  }
}

TEST(Random, BernoulliFrequenciesIntoEveryOutputType) {
  Random rng(test_seed());
  const double probabilities[] = {0.0, 0.05, 0.5, 0.9, 1.0};
  const int64_t per = kDraws / 8;
  std::vector<float> p;
  for (double q : probabilities) p.insert(p.end(), per, static_cast<float>(q));
  const int64_t n = static_cast<int64_t>(p.size());
  const Tensor p_gpu = upload_floats(p, DType::f32, {n});
  for (DType out : {DType::f32, DType::i64, DType::boolean}) {
    kernels::RandomDraw d;
    d.distribution = kernels::RandomDistribution::Bernoulli;
    d.key = {static_cast<uint32_t>(rng.engine()()), 3};
    const std::vector<double> y = draw(d, out, n, &p_gpu);
    for (size_t k = 0; k < std::size(probabilities); ++k) {
      double ones = 0;
      for (int64_t i = 0; i < per; ++i) {
        const double v = y[k * per + i];
        ASSERT_TRUE(v == 0.0 || v == 1.0) << v;
        ones += v;
      }
      const double q = probabilities[k];
      EXPECT_NEAR(ones / static_cast<double>(per), q,
                  5 * std::sqrt(q * (1 - q) / static_cast<double>(per)) + 1e-12)
          << dtype_name(out) << " p = " << q;
    }
  }
}

TEST(Random, SameKeySameTensorOtherKeyAnother) {
  kernels::RandomDraw d;
  d.distribution = kernels::RandomDistribution::Normal;
  d.key = {42, 1};
  const std::vector<double> a = draw(d, DType::f32, 4096), b = draw(d, DType::f32, 4096);
  EXPECT_EQ(a, b);
  d.key = {43, 1};
  const std::vector<double> c = draw(d, DType::f32, 4096);
  int64_t same = 0;
  for (size_t i = 0; i < a.size(); ++i) same += a[i] == c[i];
  EXPECT_LT(same, 4);
}

}  // namespace
}  // namespace onda::test
