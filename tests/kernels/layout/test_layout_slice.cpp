// The Slice layout kernel (starts, ends, axes, steps with ONNX clamping)
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <gtest/gtest.h>

#include "kernels/layout/slice.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

TEST(LayoutSlice, RandomStartsEndsStepsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 10; ++trial) {
      const Shape shape = random_shape(rng, 1, 5, 9);
      const HostBytes in = random_host(rng, dtype, shape);
      std::vector<int64_t> starts, ends, axes, steps;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (rng.integer(0, 2) == 0) continue;
        const int64_t dim = shape[d];
        int64_t step = rng.integer(1, 3) * (rng.integer(0, 1) ? 1 : -1);
        // Out-of-range and negative starts/ends exercise ONNX's clamping.
        starts.push_back(rng.integer(-dim - 2, dim + 2));
        ends.push_back(rng.integer(0, 5) == 0 ? (step > 0 ? INT64_MAX : INT64_MIN)
                                              : rng.integer(-dim - 2, dim + 2));
        axes.push_back(rng.integer(0, 1) ? static_cast<int64_t>(d)
                                         : static_cast<int64_t>(d) - static_cast<int64_t>(shape.size()));
        steps.push_back(step);
      }
      const auto dims = kernels::plan_slice(shape, starts, ends, axes, steps);
      const Shape out_shape = kernels::slice_output_shape(dims);
      // Reference straight from the ONNX definition (numpy slicing with the same clamps).
      std::vector<int64_t> s0(shape.size(), 0), st(shape.size(), 1);
      for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = axes[k] < 0 ? axes[k] + static_cast<int64_t>(shape.size()) : axes[k];
        const int64_t dim = shape[a];
        int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
        s = steps[k] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
        s0[a] = s;
        st[a] = steps[k];
      }
      const HostBytes expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(c.size());
        for (size_t d = 0; d < c.size(); ++d) ic[d] = s0[d] + c[d] * st[d];
        return flat_index(shape, ic);
      });
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
        kernels::record_slice(layout_kc(), r, input, dims, out);
      });
      EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(shape) << " -> "
                        << shape_string(out_shape);
      ++cases;
    }
  }
  std::printf("Slice: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutSlice, OnnxClampingRules) {
  // Cases from the ONNX Slice definition: end past the dim, negative step to the front, start past the end.
  const Shape shape = {10};
  auto one = [&](int64_t s, int64_t e, int64_t st) {
    const std::vector<int64_t> ss{s}, ee{e}, aa{0}, tt{st};
    return kernels::plan_slice(shape, ss, ee, aa, tt)[0];
  };
  auto d = one(2, 1000, 1);
  EXPECT_EQ(d.start, 2);
  EXPECT_EQ(d.size, 8);
  d = one(-1, INT64_MIN, -1);  // the reversed tensor
  EXPECT_EQ(d.start, 9);
  EXPECT_EQ(d.size, 10);
  d = one(20, -20, -3);
  EXPECT_EQ(d.start, 9);
  EXPECT_EQ(d.size, 4);  // 9, 6, 3, 0
  d = one(5, 2, 1);
  EXPECT_EQ(d.size, 0);
  const std::vector<int64_t> s{0}, e{1}, a{0}, zero{0};
  EXPECT_THROW(kernels::plan_slice(shape, s, e, a, zero), std::invalid_argument);
  const std::vector<int64_t> bad_axis{1};
  EXPECT_THROW(kernels::plan_slice(shape, s, e, bad_axis), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
