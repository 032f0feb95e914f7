// The Pad layout kernel (constant, reflect, edge, wrap; negative pads crop)
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/layout/pad.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

// numpy's pad index rules, written independently of the kernel's (loop-based reflection).
int64_t pad_source(int64_t x, int64_t n, kernels::PadMode mode) {
  if (x >= 0 && x < n) return x;
  switch (mode) {
    case kernels::PadMode::Constant:
      return -1;
    case kernels::PadMode::Edge:
      return x < 0 ? 0 : n - 1;
    case kernels::PadMode::Wrap:
      while (x < 0) x += n;
      return x % n;
    case kernels::PadMode::Reflect:
      if (n == 1) return 0;
      while (x < 0 || x >= n) x = x < 0 ? -x : 2 * (n - 1) - x;
      return x;
  }
  return -1;
}

TEST(LayoutPad, AllModesNegativePadsEveryDtype) {
  Random rng(test_seed());
  const kernels::PadMode modes[] = {kernels::PadMode::Constant, kernels::PadMode::Reflect,
                                    kernels::PadMode::Edge, kernels::PadMode::Wrap};
  const char* names[] = {"constant", "reflect", "edge", "wrap"};
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int m = 0; m < 4; ++m) {
      for (int trial = 0; trial < 3; ++trial) {
        const Shape shape = random_shape(rng, 1, 4, 7);
        const size_t rank = shape.size();
        std::vector<int64_t> pads(2 * rank);
        std::vector<int64_t> crop_begin(rank), left(rank), pad_begin(rank);
        for (size_t d = 0; d < rank; ++d) {
          // Crops (negative pads) keep at least nothing; positive pads then pad what is left,
          // within ONNX's limits for the mode (reflect: <= left - 1).
          int64_t b = rng.integer(-shape[d] / 2, shape[d] + 1);
          int64_t e = rng.integer(-(shape[d] - shape[d] / 2), shape[d] + 1);
          if (m == 0 && trial == 2 && d == 0) b = -shape[d] - 2, e = 3;  // over-cropped: all constant
          const int64_t kept = shape[d] - std::max<int64_t>(-b, 0) - std::max<int64_t>(-e, 0);
          const int64_t limit = modes[m] == kernels::PadMode::Reflect ? kept - 1 : kept > 0 ? INT64_MAX : 0;
          if (m != 0)
            b = std::min(b, std::max<int64_t>(limit, 0)), e = std::min(e, std::max<int64_t>(limit, 0));
          pads[d] = b;
          pads[d + rank] = e;
          crop_begin[d] = std::max<int64_t>(-b, 0);
          pad_begin[d] = std::max<int64_t>(b, 0);
          left[d] = std::max<int64_t>(kept, 0);
        }
        const Shape out_shape = kernels::pad_output_shape(shape, pads);
        const double value = dtype == DType::boolean ? 1.0
                             : dtype == DType::u8    ? 200.0
                                                     : -3.5 + (is_float(dtype) ? 0 : 0.5);
        const HostBytes in = random_host(rng, dtype, shape);
        const HostBytes expected = reference_gather(
            in, out_shape,
            [&](const std::vector<int64_t>& c) {
              std::vector<int64_t> ic(rank);
              for (size_t d = 0; d < rank; ++d) {
                // ONNX reference: crop first, then pad the cropped input.
                const int64_t x = left[d] == 0 ? -1 : pad_source(c[d] - pad_begin[d], left[d], modes[m]);
                if (x < 0) return int64_t{-1};
                ic[d] = crop_begin[d] + x;
              }
              return flat_index(shape, ic);
            },
            host_value(dtype, value));
        const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
        EXPECT_EQ(run_and_compare(rng, expected,
                                  [&](gpu::CommandRecorder& r, const Tensor& out) {
                                    kernels::record_pad(layout_kc(), r, input, pads, modes[m], value, out);
                                  }),
                  0)
            << "Pad " << names[m] << " " << dtype_label(dtype) << " " << shape_string(shape) << " pads ["
            << fmt::format("{}", fmt::join(pads, ",")) << "]";
        ++cases;
      }
    }
  }
  std::printf("Pad: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutPad, RejectsWhatOnnxRejects) {
  Random rng(test_seed());
  const Tensor input = upload_view(rng, random_host(rng, DType::f32, {2, 5}), 0);
  gpu::CommandRecorder r(gpu().context);
  // Reflect by more than length - 1, after a crop of the other side.
  const std::vector<int64_t> too_far = {0, 3, 0, -2};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, too_far, kernels::PadMode::Reflect, 0.0,
                                   poisoned(DType::f32, {2, 6})),
               std::invalid_argument);
  // Edge-padding a dim cropped to nothing.
  const std::vector<int64_t> nothing_left = {0, -5, 0, 2};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, nothing_left, kernels::PadMode::Edge, 0.0,
                                   poisoned(DType::f32, {2, 2})),
               std::invalid_argument);
  // A wrong output shape.
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, pads, kernels::PadMode::Constant, 0.0,
                                   poisoned(DType::f32, {4, 5})),
               std::invalid_argument);
}

TEST(LayoutPad, ReflectOfAudioFrame) {
  // STFT centring as the models do it: reflect n_fft/2 on both sides of [1, 2, T].
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    const Shape shape = {1, 2, 3001};
    const std::vector<int64_t> pads = {0, 0, 256, 0, 0, 255};
    const HostBytes in = random_host(rng, dtype, shape);
    const Shape out_shape = kernels::pad_output_shape(shape, pads);
    const HostBytes expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
      return flat_index(shape, {c[0], c[1], pad_source(c[2] - 256, 3001, kernels::PadMode::Reflect)});
    });
    const Tensor input = upload_view(rng, in, 0);
    EXPECT_EQ(run_and_compare(rng, expected,
                              [&](gpu::CommandRecorder& r, const Tensor& out) {
                                kernels::record_pad(layout_kc(), r, input, pads, kernels::PadMode::Reflect,
                                                    0.0, out);
                              }),
              0);
  }
}

}  // namespace
}  // namespace onda::test
