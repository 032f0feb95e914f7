// The Expand and Tile layout kernels
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <gtest/gtest.h>

#include "kernels/layout/expand_tile.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

TEST(LayoutExpandTile, RandomBroadcastsAndRepeatsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 6; ++trial) {
      // Expand: an input with unit dims broadcast to a shape of possibly higher rank.
      const Shape target = random_shape(rng, 1, 5, 6);
      Shape in_shape(target.end() - rng.integer(0, static_cast<int64_t>(target.size())), target.end());
      for (auto& d : in_shape) {
        if (rng.integer(0, 1)) d = 1;
      }
      const Shape out_shape = kernels::expand_output_shape(in_shape, target);
      ASSERT_EQ(out_shape, target);
      const HostBytes in = random_host(rng, dtype, in_shape);
      const size_t lead = out_shape.size() - in_shape.size();
      const HostBytes expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(in_shape.size());
        for (size_t d = 0; d < in_shape.size(); ++d) ic[d] = in_shape[d] == 1 ? 0 : c[d + lead];
        return flat_index(in_shape, ic);
      });
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, expected,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_expand(layout_kc(), r, input, out);
                                }),
                0)
          << "Expand " << dtype_label(dtype) << " " << shape_string(in_shape) << " -> "
          << shape_string(out_shape);

      // Tile.
      const Shape tshape = random_shape(rng, 1, 4, 5);
      std::vector<int64_t> repeats(tshape.size());
      Shape tout(tshape.size());
      for (size_t d = 0; d < tshape.size(); ++d)
        repeats[d] = rng.integer(0, 3), tout[d] = tshape[d] * repeats[d];
      if (element_count(tout) == 0) repeats[0] = 1, tout[0] = tshape[0];
      for (size_t d = 0; d < tshape.size(); ++d) {
        if (repeats[d] == 0) repeats[d] = 2, tout[d] = 2 * tshape[d];
      }
      const HostBytes tin = random_host(rng, dtype, tshape);
      const HostBytes texpected = reference_gather(tin, tout, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(c.size());
        for (size_t d = 0; d < c.size(); ++d) ic[d] = c[d] % tshape[d];
        return flat_index(tshape, ic);
      });
      const Tensor tinput = upload_view(rng, tin, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, texpected,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_tile(layout_kc(), r, tinput, repeats, out);
                                }),
                0)
          << "Tile " << dtype_label(dtype) << " " << shape_string(tshape) << " -> " << shape_string(tout);
      cases += 2;
    }
  }
  std::printf("Expand/Tile: %d random cases checked byte for byte\n", cases);
}

}  // namespace
}  // namespace onda::test
