// Resize against CPU references: nearest (every dtype, every rounding mode, byte-exact), linear and
// cubic (f32/f16, float64 interpolation, rel L2; cubic after ONNX's reference, every coefficient
// form and exclude_outside) for every coordinate transform, up- and downsampling,
// sizes and scales, UVR's bilinear align_corners shapes, and views with element offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/layout/resize.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

using kernels::ResizeCoordinates;
using kernels::ResizeMode;
using kernels::ResizeNearestMode;

// The original coordinate as an exact fraction num / den (ONNX's definition in exact arithmetic),
// with scale = p / q.
struct Fraction {
  int64_t num, den;
};
Fraction original_position(int64_t x, int64_t p, int64_t q, int64_t in, int64_t out, ResizeCoordinates c) {
  switch (c) {
    case ResizeCoordinates::HalfPixel:
      return {(2 * x + 1) * q - p, 2 * p};
    case ResizeCoordinates::Asymmetric:
      return {x * q, p};
    case ResizeCoordinates::AlignCorners:
      // ONNX: length_resized = in * scale, not floored (its reference and
      // test_resize_downsample_scales_linear_align_corners).
      return (out == 1 || in * p - q <= 0) ? Fraction{0, 1} : Fraction{x * (in - 1) * q, in * p - q};
    case ResizeCoordinates::PytorchHalfPixel:
      return out > 1 ? Fraction{(2 * x + 1) * q - p, 2 * p} : Fraction{0, 1};
    case ResizeCoordinates::TfHalfPixelForNn:
      return {(2 * x + 1) * q, 2 * p};
  }
  return {0, 1};
}

int64_t nearest(Fraction f, int64_t in, ResizeNearestMode m) {
  // Compare 2 * num with (2k + 1) * den instead of rounding floats: ties are exact.
  const int64_t fl = static_cast<int64_t>(std::floor(static_cast<long double>(f.num) / f.den));
  const int64_t twice_rem = 2 * (f.num - fl * f.den);
  int64_t r = fl;
  switch (m) {
    case ResizeNearestMode::RoundPreferFloor:
      r = twice_rem > f.den ? fl + 1 : fl;
      break;
    case ResizeNearestMode::RoundPreferCeil:
      r = twice_rem >= f.den ? fl + 1 : fl;
      break;
    case ResizeNearestMode::Floor:
      r = fl;
      break;
    case ResizeNearestMode::Ceil:
      r = twice_rem > 0 ? fl + 1 : fl;
      break;
  }
  return std::clamp<int64_t>(r, 0, in - 1);
}

struct ResizeCase {
  Shape in, out;
  std::vector<float> scales;  // empty: from sizes
};

ResizeCase random_case(Random& rng) {
  ResizeCase rc;
  const int rank = static_cast<int>(rng.integer(1, 4));
  rc.in = random_shape(rng, rank, rank, 5);
  for (size_t d = rank >= 2 ? rank - 2 : 0; d < static_cast<size_t>(rank); ++d) rc.in[d] = rng.integer(1, 13);
  rc.out = rc.in;
  if (rng.integer(0, 1)) {
    const float choices[] = {2.0f, 0.5f, 3.0f, 1.5f, 0.75f, 1.0f, 2.5f, 1.25f};
    rc.scales.assign(rank, 1.0f);
    for (size_t d = rank >= 2 ? rank - 2 : 0; d < static_cast<size_t>(rank); ++d) {
      rc.scales[d] = choices[rng.integer(0, 7)];
      rc.out[d] = static_cast<int64_t>(std::floor(rc.in[d] * static_cast<double>(rc.scales[d])));
      if (rc.out[d] == 0) rc.scales[d] = 1.0f, rc.out[d] = rc.in[d];
    }
  } else {
    for (size_t d = rank >= 2 ? rank - 2 : 0; d < static_cast<size_t>(rank); ++d)
      rc.out[d] = rng.integer(1, 25);
  }
  return rc;
}

// Per resized dim: scale = p / q, in, out (H first; rank 1 has H = 1).
struct Axis {
  int64_t p, q, in, out;
};
std::pair<Axis, Axis> axes_of(const ResizeCase& rc) {
  const size_t r = rc.in.size();
  auto axis = [&](size_t d) {
    if (rc.scales.empty()) return Axis{rc.out[d], rc.in[d], rc.in[d], rc.out[d]};
    const int64_t q = 4;  // every test scale is a multiple of 1/4
    return Axis{static_cast<int64_t>(rc.scales[d] * q), q, rc.in[d], rc.out[d]};
  };
  return {r >= 2 ? axis(r - 2) : Axis{1, 1, 1, 1}, axis(r - 1)};
}

const ResizeCoordinates kCoordinates[] = {
    ResizeCoordinates::HalfPixel, ResizeCoordinates::Asymmetric, ResizeCoordinates::AlignCorners,
    ResizeCoordinates::PytorchHalfPixel, ResizeCoordinates::TfHalfPixelForNn};

TEST(LayoutResize, NearestEveryModeEveryDtype) {
  Random rng(test_seed());
  const ResizeNearestMode modes[] = {ResizeNearestMode::RoundPreferFloor, ResizeNearestMode::RoundPreferCeil,
                                     ResizeNearestMode::Floor, ResizeNearestMode::Ceil};
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 8; ++trial) {
      const ResizeCase rc = random_case(rng);
      kernels::ResizeAttributes at;
      at.mode = ResizeMode::Nearest;
      at.coordinates = kCoordinates[trial % 4];
      at.nearest = modes[(trial / 4 + cases) % 4];
      at.scales = rc.scales;
      const auto [ah, aw] = axes_of(rc);
      const HostBytes in = random_host(rng, dtype, rc.in);
      const HostBytes expected = reference_gather(in, rc.out, [&](const std::vector<int64_t>& c) {
        const size_t r = c.size();
        std::vector<int64_t> ic = c;
        ic[r - 1] = nearest(original_position(c[r - 1], aw.p, aw.q, aw.in, aw.out, at.coordinates), aw.in,
                            at.nearest);
        if (r >= 2) {
          ic[r - 2] = nearest(original_position(c[r - 2], ah.p, ah.q, ah.in, ah.out, at.coordinates), ah.in,
                              at.nearest);
        }
        return flat_index(rc.in, ic);
      });
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      OutputView out = poisoned_view(dtype, rc.out, random_offset(rng, dtype));
      gpu::CommandRecorder r(gpu().context);
      kernels::record_resize(layout_kc(), r, input, at, out.view);
      r.submit_and_wait();
      EXPECT_EQ(count_mismatches(out, expected), 0)
          << dtype_name(dtype) << " " << shape_string(rc.in) << " -> " << shape_string(rc.out) << " coord "
          << static_cast<int>(at.coordinates) << " nearest " << static_cast<int>(at.nearest);
      ++cases;
    }
  }
  std::printf("Resize nearest: %d random cases checked byte for byte\n", cases);
}

// Bilinear in float64 from the exact coordinates; rel L2 over the whole output.
// ONNX's cubic interpolation along one axis at x_original (its reference op_resize.py): the 4 indices
// nearest to x in the input padded by 2 at each end with edge values (ties to the smaller index), the
// weights of _cubic_coeffs at ratio = frac(x) (1 when x is whole), taps outside the input zeroed and
// the rest renormalized with exclude_outside.
std::vector<std::pair<int64_t, double>> cubic_taps(Fraction f, int64_t in, double a, bool exclude) {
  const double x = static_cast<double>(f.num) / static_cast<double>(f.den);
  const double whole = std::floor(x);
  const double ratio = x == whole ? 1.0 : x - whole;
  std::vector<double> w = {((a * (ratio + 1) - 5 * a) * (ratio + 1) + 8 * a) * (ratio + 1) - 4 * a,
                           ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1,
                           ((a + 2) * (1 - ratio) - (a + 3)) * (1 - ratio) * (1 - ratio) + 1,
                           ((a * (2 - ratio) - 5 * a) * (2 - ratio) + 8 * a) * (2 - ratio) - 4 * a};
  std::vector<int64_t> candidates;
  for (int64_t i = -2; i < in + 2; ++i) candidates.push_back(i);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int64_t l, int64_t r) { return std::abs(x - l) < std::abs(x - r); });
  std::vector<int64_t> idx(candidates.begin(), candidates.begin() + 4);
  std::sort(idx.begin(), idx.end());
  if (exclude) {
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      if (idx[k] < 0 || idx[k] >= in) w[k] = 0;
      sum += w[k];
    }
    for (double& v : w) v /= sum;
  }
  std::vector<std::pair<int64_t, double>> taps;
  for (int k = 0; k < 4; ++k) taps.push_back({std::clamp<int64_t>(idx[k], 0, in - 1), w[k]});
  return taps;
}

struct Interpolation {
  ResizeMode mode = ResizeMode::Linear;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
};

double run_linear(Random& rng, DType dtype, const ResizeCase& rc, ResizeCoordinates coordinates,
                  Interpolation how = {}) {
  kernels::ResizeAttributes at;
  at.mode = how.mode;
  at.cubic_a = how.cubic_a;
  at.exclude_outside = how.exclude_outside;
  at.coordinates = coordinates;
  at.scales = rc.scales;
  const auto [ah, aw] = axes_of(rc);
  const std::vector<float> values = round_to_dtype(rng.normal(element_count(rc.in)), dtype);
  const int64_t planes = element_count(rc.in) / (ah.in * aw.in);
  std::vector<double> ref;
  ref.reserve(planes * ah.out * aw.out);
  auto taps = [&](int64_t x, const Axis& a) {
    const Fraction f = original_position(x, a.p, a.q, a.in, a.out, coordinates);
    if (how.mode == ResizeMode::Cubic) return cubic_taps(f, a.in, how.cubic_a, how.exclude_outside);
    const double c =
        std::clamp<double>(static_cast<double>(f.num) / static_cast<double>(f.den), 0.0, a.in - 1.0);
    const int64_t i0 = static_cast<int64_t>(std::floor(c));
    return std::vector<std::pair<int64_t, double>>{{i0, 1 - (c - i0)}, {std::min(i0 + 1, a.in - 1), c - i0}};
  };
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t y = 0; y < ah.out; ++y) {
      for (int64_t x = 0; x < aw.out; ++x) {
        double sum = 0;
        for (const auto& [yy, wy] : taps(y, ah))
          for (const auto& [xx, wx] : taps(x, aw)) sum += wy * wx * values[(p * ah.in + yy) * aw.in + xx];
        ref.push_back(sum);
      }
    }
  }
  HostBytes h{dtype, rc.in, {}};
  const Tensor plain = upload_floats(values, dtype, rc.in);
  h.bytes = plain.download_bytes(gpu().context);
  const Tensor input = upload_view(rng, h, random_offset(rng, dtype));
  OutputView out = poisoned_view(dtype, rc.out, random_offset(rng, dtype));
  gpu::CommandRecorder r(gpu().context);
  kernels::record_resize(layout_kc(), r, input, at, out.view);
  r.submit_and_wait();
  // Outside the view the poison must survive.
  const std::vector<float> all = out.parent.download_floats(gpu().context);
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) {
    if (i < out.offset || i >= out.offset + element_count(rc.out)) {
      EXPECT_TRUE(std::isnan(all[i])) << "wrote outside the view at " << i;
    }
  }
  return rel_l2(out.view.download_floats(gpu().context), ref);
}

TEST(LayoutResize, LinearEveryCoordinateTransform) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    for (int trial = 0; trial < 24; ++trial) {
      const ResizeCase rc = random_case(rng);
      const double e = run_linear(rng, dtype, rc, kCoordinates[trial % 4]);
      EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3)
          << shape_string(rc.in) << " -> " << shape_string(rc.out);
      worst = std::max(worst, e);
    }
    std::printf("Resize linear %s: 24 random cases, worst rel L2 %.2e\n",
                std::string(dtype_name(dtype)).c_str(), worst);
  }
}

TEST(LayoutResize, CubicEveryCoordinateTransformAndCoefficient) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    double worst = 0;
    for (int trial = 0; trial < 10; ++trial) {
      const ResizeCase rc = random_case(rng);
      Interpolation how;
      how.mode = ResizeMode::Cubic;
      how.cubic_a = trial % 2 ? -0.5f : -0.75f;
      how.exclude_outside = trial % 3 == 0;
      const double e = run_linear(rng, dtype, rc, kCoordinates[trial % 5], how);
      // The cubic weights cancel (negative lobes, renormalized with exclude_outside): a few f32 ulps.
      EXPECT_LE(e, dtype == DType::f32 ? 1e-5 : 1e-3)
          << shape_string(rc.in) << " -> " << shape_string(rc.out) << " A " << how.cubic_a
          << (how.exclude_outside ? " exclude_outside" : "");
      worst = std::max(worst, e);
    }
    std::printf("Resize cubic %s: 10 random cases, worst rel L2 %.2e\n",
                std::string(dtype_name(dtype)).c_str(), worst);
  }
}

TEST(LayoutResize, UvrBilinearAlignCorners) {
  // UVR v5.1: ASPP's pooled branch [1, C, 1, W] back to [1, C, H, W], and the decoders' 2x upsampling.
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    const double a =
        run_linear(rng, dtype, {{1, 8, 1, 64}, {1, 8, 21, 64}, {}}, ResizeCoordinates::AlignCorners);
    const double b = run_linear(rng, dtype, {{1, 4, 42, 32}, {1, 4, 84, 64}, {1.0f, 1.0f, 2.0f, 2.0f}},
                                ResizeCoordinates::AlignCorners);
    // Rows wider than a workgroup's 64 columns, 42 rows (not a multiple of its 4) over three planes.
    const double c = run_linear(rng, dtype, {{1, 3, 7, 65}, {1, 3, 14, 130}, {1.0f, 1.0f, 2.0f, 2.0f}},
                                ResizeCoordinates::AlignCorners);
    std::printf("Resize UVR %s: rel L2 %.2e, %.2e, %.2e\n", std::string(dtype_name(dtype)).c_str(), a, b, c);
    EXPECT_LE(std::max({a, b, c}), dtype == DType::f32 ? 1e-6 : 1e-3);
  }
}

TEST(LayoutResize, NearestTiesFollowTheRoundingMode) {
  // 4 -> 8 asymmetric: x_original = x / 2, a tie at every odd x. Expected indices from the ONNX
  // definition: round_prefer_floor keeps the lower neighbour, round_prefer_ceil the upper (clamped).
  Random rng(test_seed());
  const HostBytes in = random_host(rng, DType::i32, {1, 4});
  const Tensor input = upload_view(rng, in, 0);
  const std::pair<ResizeNearestMode, std::vector<int64_t>> cases[] = {
      {ResizeNearestMode::RoundPreferFloor, {0, 0, 1, 1, 2, 2, 3, 3}},
      {ResizeNearestMode::RoundPreferCeil, {0, 1, 1, 2, 2, 3, 3, 3}},
      {ResizeNearestMode::Ceil, {0, 1, 1, 2, 2, 3, 3, 3}},
      {ResizeNearestMode::Floor, {0, 0, 1, 1, 2, 2, 3, 3}},
  };
  for (const auto& [mode, source] : cases) {
    kernels::ResizeAttributes at;
    at.coordinates = ResizeCoordinates::Asymmetric;
    at.nearest = mode;
    OutputView out = poisoned_view(DType::i32, {1, 8}, 0);
    gpu::CommandRecorder r(gpu().context);
    kernels::record_resize(layout_kc(), r, input, at, out.view);
    r.submit_and_wait();
    const HostBytes expected =
        reference_gather(in, {1, 8}, [&](const std::vector<int64_t>& c) { return source[c[1]]; });
    EXPECT_EQ(count_mismatches(out, expected), 0) << "nearest mode " << static_cast<int>(mode);
  }
}

TEST(LayoutResize, RejectsUnsupported) {
  Random rng(test_seed());
  const Tensor ints = upload_view(rng, random_host(rng, DType::i32, {1, 2, 3, 3}), 0);
  Tensor out = poisoned(DType::i32, {1, 2, 6, 6});
  kernels::ResizeAttributes at;
  at.mode = ResizeMode::Linear;
  gpu::CommandRecorder r(gpu().context);
  EXPECT_THROW(kernels::record_resize(layout_kc(), r, ints, at, out), std::invalid_argument);
  at.mode = ResizeMode::Cubic;
  EXPECT_THROW(kernels::record_resize(layout_kc(), r, ints, at, out), std::invalid_argument);
  Tensor channels = poisoned(DType::i32, {1, 4, 6, 6});
  at.mode = ResizeMode::Nearest;
  EXPECT_THROW(kernels::record_resize(layout_kc(), r, ints, at, channels), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
