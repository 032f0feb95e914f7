// The rotate_half kernel (kernels/layout/rotate_half.h) against a reference computed here: pairs
// (last axis 2), halves of longer axes, float16, and rows split over storage bindings.
#include <gtest/gtest.h>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/layout/rotate_half.h"

namespace onda::test {
namespace {

double run_case(const Shape& shape, DType dtype, Random& rng) {
  const std::vector<float> x = round_to_dtype(rng.normal(element_count(shape)), dtype);
  Tensor tx = upload_floats(x, dtype, shape), ty = poisoned(dtype, shape);
  gpu::CommandRecorder recorder(gpu().context);
  kernels::record_rotate_half({gpu().context, gpu().pipelines}, recorder, tx, ty);
  recorder.submit_and_wait();
  const int64_t last = shape.back(), half = last / 2;
  std::vector<double> expected(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i) % last;
    expected[i] = j < half ? -double(x[i + half]) : double(x[i - half]);
  }
  return rel_l2(ty.download_floats(gpu().context), expected);
}

TEST(RotateHalf, PairsAndHalvesMatchTheReference) {
  Random rng(test_seed());
  const std::pair<Shape, DType> cases[] = {{{2, 3, 5, 32, 2}, DType::f32}, {{4, 7, 64}, DType::f32},
                                           {{3, 2}, DType::f32},           {{5, 9, 6}, DType::f16},
                                           {{2, 11, 16, 2}, DType::f16},   {{0, 4}, DType::f32}};
  for (const auto& [shape, dtype] : cases) EXPECT_EQ(run_case(shape, dtype, rng), 0.0) << shape_string(shape);
}

TEST(RotateHalf, RowsSplitOverStorageBindings) {
  const uint64_t limit = gpu().context.limits().maxStorageBufferBindingSize;
  if (limit > (uint64_t{256} << 20))
    GTEST_SKIP() << "binding limit " << limit << " bytes: too large a test here";
  Random rng(test_seed());
  const int64_t last = 64, rows = static_cast<int64_t>(limit / (last * 4)) + 5;
  EXPECT_EQ(run_case({rows, last}, DType::f32, rng), 0.0);
}

TEST(RotateHalf, RejectsOddAxesAndMismatches) {
  gpu::CommandRecorder recorder(gpu().context);
  const kernels::KernelContext kc{gpu().context, gpu().pipelines};
  EXPECT_THROW(
      kernels::record_rotate_half(kc, recorder, poisoned(DType::f32, {4, 3}), poisoned(DType::f32, {4, 3})),
      std::invalid_argument);
  EXPECT_THROW(kernels::record_rotate_half(kc, recorder, poisoned(DType::f32, {4, 4}),
                                           poisoned(DType::f32, {4, 2, 2})),
               std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
