// AveragePool / MaxPool 2-D (and 1-D) against float64 references: random kernels, strides, pads,
// dilations, count_include_pad and ceil_mode, f32 and f16, views with element offsets; UVR's
// full-height average pool.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/layout/pool.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

using kernels::Pool2dAttributes;
using kernels::PoolKind;

std::vector<double> pool_reference(const std::vector<float>& x, const Shape& in, const Shape& out,
                                   const Pool2dAttributes& a) {
  const bool rank4 = in.size() == 4;
  const int64_t H = rank4 ? in[2] : 1, W = in.back(), OH = rank4 ? out[2] : 1, OW = out.back();
  const int64_t planes = in[0] * in[1];
  std::vector<double> ref;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        double sum = 0, best = -INFINITY;
        int64_t taps = 0, padded = 0;
        for (int64_t ky = 0; ky < a.kernel_h; ++ky) {
          for (int64_t kx = 0; kx < a.kernel_w; ++kx) {
            const int64_t iy = oy * a.stride_h - a.pad_top + ky * a.dilation_h;
            const int64_t ix = ox * a.stride_w - a.pad_left + kx * a.dilation_w;
            if (iy < H + a.pad_bottom && ix < W + a.pad_right) ++padded;
            if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
            const double v = x[(p * H + iy) * W + ix];
            sum += v;
            best = std::max(best, v);
            ++taps;
          }
        }
        ref.push_back(
            a.kind == PoolKind::Max ? best : sum / static_cast<double>(a.count_include_pad ? padded : taps));
      }
    }
  }
  return ref;
}

double run_pool(Random& rng, DType dtype, const Shape& in, const Pool2dAttributes& a) {
  const Shape out_shape = kernels::pool2d_output_shape(in, a);
  const std::vector<float> x = round_to_dtype(rng.normal(element_count(in)), dtype);
  const std::vector<double> ref = pool_reference(x, in, out_shape, a);
  HostBytes h{dtype, in, upload_floats(x, dtype, in).download_bytes(gpu().context)};
  const Tensor input = upload_view(rng, h, random_offset(rng, dtype));
  OutputView out = poisoned_view(dtype, out_shape, random_offset(rng, dtype));
  gpu::CommandRecorder r(gpu().context);
  kernels::record_pool2d(layout_kc(), r, input, a, out.view);
  r.submit_and_wait();
  const std::vector<float> all = out.parent.download_floats(gpu().context);
  for (int64_t i = 0; i < static_cast<int64_t>(all.size()); ++i) {
    if (i < out.offset || i >= out.offset + element_count(out_shape)) {
      EXPECT_TRUE(std::isnan(all[i])) << "wrote outside the view at " << i;
    }
  }
  // The reference rounded to the output dtype: Max is then exact, Average within rounding.
  return rel_l2(out.view.download_floats(gpu().context), ref);
}

TEST(LayoutPool, RandomWindowsAverageAndMax) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    for (PoolKind kind : {PoolKind::Average, PoolKind::Max}) {
      double worst = 0;
      for (int trial = 0; trial < 16; ++trial) {
        Pool2dAttributes a;
        a.kind = kind;
        const bool one_d = trial % 5 == 4;
        Shape in = one_d
                       ? Shape{rng.integer(1, 2), rng.integer(1, 3), rng.integer(1, 20)}
                       : Shape{rng.integer(1, 2), rng.integer(1, 3), rng.integer(1, 12), rng.integer(1, 12)};
        a.kernel_w = rng.integer(1, std::min<int64_t>(in.back(), 4));
        a.stride_w = rng.integer(1, 3);
        a.dilation_w = kind == PoolKind::Max ? rng.integer(1, 2) : 1;
        if (!one_d) {
          a.kernel_h = rng.integer(1, std::min<int64_t>(in[2], 4));
          a.stride_h = rng.integer(1, 3);
          a.dilation_h = kind == PoolKind::Max ? rng.integer(1, 2) : 1;
          a.pad_top = rng.integer(0, a.kernel_h - 1);
          a.pad_bottom = rng.integer(0, a.kernel_h - 1);
        }
        a.pad_left = rng.integer(0, a.kernel_w - 1);
        a.pad_right = rng.integer(0, a.kernel_w - 1);
        a.count_include_pad = rng.integer(0, 1);
        a.ceil_mode = rng.integer(0, 1);
        if (element_count(kernels::pool2d_output_shape(in, a)) == 0) continue;
        const double e = run_pool(rng, dtype, in, a);
        EXPECT_LE(e, kind == PoolKind::Max ? 0.0 : (dtype == DType::f32 ? 1e-6 : 1e-3))
            << shape_string(in) << " k " << a.kernel_h << "x" << a.kernel_w << " s " << a.stride_h << "x"
            << a.stride_w << " ceil " << a.ceil_mode << " include_pad " << a.count_include_pad;
        worst = std::max(worst, e);
      }
      std::printf("%s %s: worst rel L2 %.2e\n", kind == PoolKind::Max ? "MaxPool" : "AveragePool",
                  std::string(dtype_name(dtype)).c_str(), worst);
    }
  }
}

TEST(LayoutPool, UvrFullHeightAverage) {
  // UVR's ASPP: AdaptiveAvgPool2d((1, None)) exported as AveragePool with kernel [H, 1].
  Random rng(test_seed());
  Pool2dAttributes a;
  a.kernel_h = 21;
  a.stride_h = 21;
  for (DType dtype : {DType::f32, DType::f16}) {
    const double e = run_pool(rng, dtype, {1, 16, 21, 64}, a);
    std::printf("AveragePool UVR %s: rel L2 %.2e\n", std::string(dtype_name(dtype)).c_str(), e);
    EXPECT_LE(e, dtype == DType::f32 ? 1e-6 : 1e-3);
  }
}

TEST(LayoutPool, RejectsBadAttributes) {
  Pool2dAttributes a;
  a.kernel_h = 0;
  EXPECT_THROW(kernels::pool2d_output_shape({1, 1, 4, 4}, a), std::invalid_argument);
  a.kernel_h = 2;
  a.pad_top = 2;
  EXPECT_THROW(kernels::pool2d_output_shape({1, 1, 4, 4}, a), std::invalid_argument);
  Random rng(test_seed());
  const Tensor ints = upload_view(rng, random_host(rng, DType::i32, {1, 1, 4, 4}), 0);
  Tensor out = poisoned(DType::i32, {1, 1, 3, 4});
  gpu::CommandRecorder r(gpu().context);
  a.pad_top = 0;
  EXPECT_THROW(kernels::record_pool2d(layout_kc(), r, ints, a, out), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
