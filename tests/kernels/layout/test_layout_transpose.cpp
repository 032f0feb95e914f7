// The Transpose layout kernel (index-map gather, tiled for the last two dims)
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "kernels/layout/layout_plan.h"
#include "kernels/layout/transpose.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

HostBytes transpose_reference(const HostBytes& in, const std::vector<int64_t>& perm) {
  const Shape out_shape = kernels::transpose_output_shape(in.shape, perm);
  return reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(c.size());
    for (size_t k = 0; k < c.size(); ++k) ic[perm[k]] = c[k];
    return flat_index(in.shape, ic);
  });
}

int64_t check_transpose(Random& rng, DType dtype, const Shape& shape, std::vector<int64_t> perm) {
  const HostBytes in = random_host(rng, dtype, shape);
  const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
  const HostBytes expected = transpose_reference(in, perm);
  const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
    kernels::record_transpose(layout_kc(), r, input, perm, out);
  });
  EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(shape) << " perm ["
                    << fmt::format("{}", fmt::join(perm, ",")) << "]";
  return bad;
}

// One LayoutPlan recorded run after run on fresh inputs at random element offsets (the tiled kernel
// and, for another problem, the index map), byte for byte.
TEST(LayoutTranspose, PlanRecordsEveryRun) {
  Random rng(test_seed());
  for (DType dtype : {DType::f16, DType::f32}) {
    for (const auto& [shape, perm] : {std::pair<Shape, std::vector<int64_t>>{{67, 45}, {1, 0}},
                                      std::pair<Shape, std::vector<int64_t>>{{3, 4, 2}, {1, 0, 2}}}) {
      const Shape out_shape = kernels::transpose_output_shape(shape, perm);
      const kernels::LayoutPlan plan(layout_kc(),
                                     kernels::LayoutProblem::transpose(shape, dtype, perm, out_shape));
      for (int run = 0; run < 3; ++run) {
        const HostBytes in = random_host(rng, dtype, shape);
        const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
        const int64_t bad = run_and_compare(rng, transpose_reference(in, perm),
                                            [&](gpu::CommandRecorder& r, const Tensor& out) {
                                              plan.record(r, std::span(&input, 1), std::span(&out, 1));
                                            });
        EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(shape) << " run " << run;
      }
    }
  }
}

TEST(LayoutTranspose, RandomPermutationsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 10; ++trial) {
      const Shape shape = random_shape(rng, 1, trial < 2 ? 8 : 5, trial < 2 ? 3 : 9);
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng.engine());
      check_transpose(rng, dtype, shape, perm);
      ++cases;
    }
  }
  std::printf("Transpose: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutTranspose, TiledLastTwoDimsAndBatched) {
  Random rng(test_seed());
  for (DType dtype : all_dtypes()) {
    // [M, N] -> [N, M] across several tiles with ragged edges; odd M and odd strides make f16
    // output words straddle tiles.
    check_transpose(rng, dtype, {67, 45}, {1, 0});
    check_transpose(rng, dtype, {3, 33, 35}, {0, 2, 1});
    check_transpose(rng, dtype, {5, 9, 41}, {2, 1, 0});
    check_transpose(rng, dtype, {2, 201, 3, 40}, {0, 3, 2, 1});
    check_transpose(rng, dtype, {3, 66, 33}, {0, 2, 1});
    check_transpose(rng, dtype, {2, 5, 40, 7}, {0, 3, 2, 1});  // inner dim to the middle
    check_transpose(rng, dtype, {4, 34, 6}, {1, 2, 0});
  }
}

TEST(LayoutTranspose, RejectsBadPermutation) {
  Random rng(test_seed());
  const Tensor input = upload_view(rng, random_host(rng, DType::f32, {2, 3}), 0);
  Tensor out = poisoned(DType::f32, {3, 2});
  gpu::CommandRecorder r(gpu().context);
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input, std::vector<int64_t>{0, 0}, out),
               std::invalid_argument);
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input, std::vector<int64_t>{0, 1}, out),
               std::invalid_argument);
  // Rank 10 with nothing to coalesce: more than 8 dims is a clear error, not an overflow.
  const Shape big = {8, 2, 2, 2, 2, 2, 2, 2, 2, 8};
  const Tensor input10 = upload_view(rng, random_host(rng, DType::f32, big), 0);
  Tensor out10 = poisoned(DType::f32, big);
  const std::vector<int64_t> reverse = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input10, reverse, out10), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
