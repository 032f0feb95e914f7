// The layout kernels on scalars, empty tensors, views and grids over 65535 workgroups, and the
// plain copy between views, against byte-exact CPU references with outputs poisoned.
#include <gtest/gtest.h>

#include "kernels/layout/expand_tile.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/slice.h"
#include "kernels/layout/transpose.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

TEST(LayoutEdgeCases, ScalarsAndEmptyTensors) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    // A scalar through Transpose, Expand and Slice-of-nothing.
    const HostBytes scalar = random_host(rng, dtype, {});
    const Tensor s = upload_view(rng, scalar, 0);
    OutputView t = poisoned_view(dtype, {}, random_offset(rng, dtype));
    OutputView e = poisoned_view(dtype, {3, 1, 5}, random_offset(rng, dtype));
    gpu::CommandRecorder r(gpu().context);
    kernels::record_transpose(layout_kc(), r, s, {}, t.view);
    kernels::record_expand(layout_kc(), r, s, e.view);
    // Empty outputs record nothing and leave the poison.
    const HostBytes empty_in = random_host(rng, dtype, {0, 4});
    const Tensor empty = upload_view(rng, empty_in, 0);
    OutputView empty_out = poisoned_view(dtype, {4, 0}, 0);
    kernels::record_transpose(layout_kc(), r, empty, std::vector<int64_t>{1, 0}, empty_out.view);
    const auto dims = kernels::plan_slice({0, 4}, std::vector<int64_t>{-1}, std::vector<int64_t>{INT64_MIN},
                                          std::vector<int64_t>{0}, std::vector<int64_t>{-1});
    EXPECT_EQ(kernels::slice_output_shape(dims), (Shape{0, 4}));
    kernels::record_slice(layout_kc(), r, empty, dims, poisoned(dtype, {0, 4}));
    r.submit_and_wait();
    EXPECT_EQ(count_mismatches(t, scalar), 0);
    EXPECT_EQ(count_mismatches(e, reference_gather(scalar, {3, 1, 5},
                                                   [](const std::vector<int64_t>&) { return int64_t{0}; })),
              0);
    EXPECT_EQ(count_mismatches(empty_out, HostBytes{dtype, {4, 0}, {}}), 0);
  }
}

TEST(LayoutEdgeCases, CopyBetweenViewsEveryDtype) {
  Random rng(test_seed());
  for (DType dtype : all_dtypes()) {
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{7}, Shape{3, 5, 2}}) {
      const HostBytes in = random_host(rng, dtype, shape);
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, in,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_copy(layout_kc(), r, input, out);
                                }),
                0)
          << dtype_name(dtype) << " " << shape_string(shape);
    }
  }
}

TEST(LayoutEdgeCases, MoreThan65535WorkgroupsSplitOverY) {
  // f16 Expand: one invocation per output word, 16.8M words > 65535 * 256, so the dispatch uses
  // a 2-D workgroup grid.
  Random rng(test_seed());
  const Shape in_shape = {1, 8192}, out_shape = {4100, 8192};
  const HostBytes in = random_host(rng, DType::f16, in_shape);
  const Tensor input = upload_view(rng, in, 2);
  OutputView out = poisoned_view(DType::f16, out_shape, 2);
  gpu::CommandRecorder r(gpu().context);
  kernels::record_expand(layout_kc(), r, input, out.view);
  r.submit_and_wait();
  const HostBytes expected =
      reference_gather(in, out_shape, [](const std::vector<int64_t>& c) { return c[1]; });
  EXPECT_EQ(count_mismatches(out, expected), 0);
}

}  // namespace
}  // namespace onda::test
