// GridSample (kernels/layout/grid_sample.h) against a float64 CPU reference written from the ONNX
// reference implementation (onnx/reference/ops/op_grid_sample.py: unnormalize, pad the point, then
// separable taps each padded on its own): every mode x padding x align_corners, 1, 2 and 3 spatial
// dims, f32 and f16, on random inputs with grid points spread past [-1, 1] so every padding rule is
// exercised. Outputs poisoned.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "harness.h"
#include "kernels/layout/grid_sample.h"

namespace onda::test {
namespace {

using kernels::GridSampleMode;
using kernels::GridSamplePadding;

double reflect(double x, double low, double high) {
  const double range = high - low;
  if (range <= 0) return low;
  if (x < low) {
    const double dx = low - x;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? low + r : high - r;
  }
  if (x > high) {
    const double dx = x - high;
    const double n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? high - r : low + r;
  }
  return x;
}

struct Reference {
  kernels::GridSampleAttributes a;
  double low(int64_t) const { return a.align_corners ? 0.0 : -0.5; }
  double high(int64_t size) const { return a.align_corners ? size - 1.0 : size - 0.5; }
  // The element a tap reads, or -1 (zeros padding outside).
  int64_t pixel(int64_t i, int64_t size) const {
    if (a.padding == GridSamplePadding::Zeros) return i >= 0 && i < size ? i : -1;
    if (a.padding == GridSamplePadding::Border) return std::clamp<int64_t>(i, 0, size - 1);
    return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), low(size), high(size))),
                               0, size - 1);
  }
  static std::vector<double> cubic(double t) {
    const double A = -0.75, x0 = t + 1, x3 = 2 - t;
    return {((A * x0 - 5 * A) * x0 + 8 * A) * x0 - 4 * A, ((A + 2) * t - (A + 3)) * t * t + 1,
            ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1,
            ((A * x3 - 5 * A) * x3 + 8 * A) * x3 - 4 * A};
  }
  // Taps (index, weight) along one axis for normalized coordinate g.
  std::vector<std::pair<int64_t, double>> taps(double g, int64_t size) const {
    double x = a.align_corners ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
    if (a.mode == GridSampleMode::Nearest) x = std::nearbyint(x);  // half to even
    if (x < low(size) || x > high(size)) {
      if (a.padding == GridSamplePadding::Border) x = std::clamp(x, 0.0, size - 1.0);
      if (a.padding == GridSamplePadding::Reflection) x = reflect(x, low(size), high(size));
    }
    if (a.mode == GridSampleMode::Nearest) return {{pixel(static_cast<int64_t>(x), size), 1.0}};
    const double x0 = std::floor(x), t = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (a.mode == GridSampleMode::Linear) return {{pixel(i0, size), 1 - t}, {pixel(i0 + 1, size), t}};
    const std::vector<double> w = cubic(t);
    std::vector<std::pair<int64_t, double>> out;
    for (int k = 0; k < 4; ++k) out.push_back({pixel(i0 - 1 + k, size), w[k]});
    return out;
  }
};

std::vector<double> reference(const std::vector<float>& x, const Shape& xs, const std::vector<float>& grid,
                              const Shape& gs, const Reference& ref) {
  const int64_t n_batch = xs[0], channels = xs[1], r = static_cast<int64_t>(xs.size()) - 2;
  int64_t points = 1, in_spatial = 1;
  for (int64_t d = 0; d < r; ++d) points *= gs[1 + d], in_spatial *= xs[2 + d];
  std::vector<double> y(n_batch * channels * points);
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t p = 0; p < points; ++p) {
      std::vector<std::vector<std::pair<int64_t, double>>> per_dim(r);
      for (int64_t d = 0; d < r; ++d)
        per_dim[d] = ref.taps(grid[(n * points + p) * r + (r - 1 - d)], xs[2 + d]);
      for (int64_t c = 0; c < channels; ++c) {
        double sum = 0;
        // Every combination of taps, dim 0 slowest.
        std::vector<size_t> k(r, 0);
        while (true) {
          double w = 1;
          int64_t address = n * channels + c;
          bool inside = true;
          for (int64_t d = 0; d < r; ++d) {
            const auto& [i, wd] = per_dim[d][k[d]];
            inside = inside && i >= 0;
            address = address * xs[2 + d] + std::max<int64_t>(i, 0);
            w *= wd;
          }
          if (inside) sum += w * x[address];
          int64_t d = r - 1;
          while (d >= 0 && ++k[d] == per_dim[d].size()) k[d--] = 0;
          if (d < 0) break;
        }
        y[(n * channels + c) * points + p] = sum;
      }
    }
  return y;
}

TEST(LayoutGridSample, EveryModePaddingAndAlignmentIn1To3Dims) {
  Random rng(test_seed());
  const GridSampleMode modes[] = {GridSampleMode::Nearest, GridSampleMode::Linear, GridSampleMode::Cubic};
  const GridSamplePadding paddings[] = {GridSamplePadding::Zeros, GridSamplePadding::Border,
                                        GridSamplePadding::Reflection};
  int trial = 0;
  for (GridSampleMode mode : modes)
    for (GridSamplePadding padding : paddings)
      for (bool align : {false, true}) {
        const int64_t r = 1 + trial % 3;
        const DType dtype = trial % 4 == 3 ? DType::f16 : DType::f32;
        ++trial;
        Shape xs = {rng.integer(1, 2), rng.integer(1, 3)}, gs = {xs[0]};
        for (int64_t d = 0; d < r; ++d) xs.push_back(rng.integer(1, r == 3 ? 4 : 6));
        for (int64_t d = 0; d < r; ++d) gs.push_back(rng.integer(1, r == 3 ? 3 : 5));
        gs.push_back(r);
        const std::vector<float> x = round_to_dtype(rng.normal(element_count(xs)), dtype);
        const std::vector<float> grid = round_to_dtype(rng.uniform(element_count(gs), -1.7, 1.7), dtype);
        const Shape ys = kernels::grid_sample_output_shape(xs, gs);
        Tensor y = poisoned(dtype, ys);
        const kernels::GridSampleAttributes attributes{mode, padding, align};
        gpu::CommandRecorder recorder(gpu().context);
        kernels::record_grid_sample(kc(), recorder, upload_floats(x, dtype, xs),
                                    upload_floats(grid, dtype, gs), attributes, y);
        recorder.submit_and_wait();
        const std::vector<double> want = reference(x, xs, grid, gs, Reference{attributes});
        // Relative to the output's norm, but never to less than a tenth of the inputs' scale per
        // output: a cubic's negative lobes can cancel a few outputs to near zero, where the f32
        // coordinate math's ~1e-7 is a large fraction (seed 4967462847928601576: 2 outputs, 2.8e-5).
        const std::vector<float> got = y.download_floats(gpu().context);
        double diff = 0, norm = 0;
        for (size_t i = 0; i < want.size(); ++i) {
          diff += (got[i] - want[i]) * (got[i] - want[i]);
          norm += want[i] * want[i];
        }
        const double error = std::sqrt(diff) / std::max(std::sqrt(norm), 0.1 * std::sqrt(double(want.size())));
        EXPECT_LT(error, dtype == DType::f16 ? 2e-3 : 1e-5)
            << "mode " << static_cast<int>(mode) << " padding " << static_cast<int>(padding) << " align "
            << align << " " << dtype_name(dtype) << " x " << shape_string(xs) << " grid " << shape_string(gs);
      }
}

TEST(LayoutGridSample, GridOfTheWrongShapeIsRefused) {
  EXPECT_THROW(kernels::grid_sample_output_shape({1, 2, 4, 4}, {1, 3, 3}), std::invalid_argument);
  EXPECT_THROW(kernels::grid_sample_output_shape({1, 2, 4, 4}, {1, 3, 3, 3}), std::invalid_argument);
  EXPECT_THROW(kernels::grid_sample_output_shape({2, 2, 4, 4}, {1, 3, 3, 2}), std::invalid_argument);
  EXPECT_EQ(kernels::grid_sample_output_shape({2, 5, 4, 4, 4}, {2, 1, 2, 3, 3}), (Shape{2, 5, 1, 2, 3}));
}

}  // namespace
}  // namespace onda::test
