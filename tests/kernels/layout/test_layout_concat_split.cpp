// The Concat and Split layout kernels
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <gtest/gtest.h>

#include <algorithm>

#include "kernels/layout/slice.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

TEST(LayoutConcatSplit, RandomAxesEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 6; ++trial) {
      const Shape base = random_shape(rng, 1, 4, 7);
      const int64_t axis = rng.integer(0, static_cast<int64_t>(base.size()) - 1);
      const int parts = static_cast<int>(rng.integer(1, 4));
      std::vector<HostBytes> pieces;
      std::vector<Tensor> inputs;
      Shape out_shape = base;
      out_shape[axis] = 0;
      for (int k = 0; k < parts; ++k) {
        Shape s = base;
        s[axis] = rng.integer(0, 5);  // empty pieces included
        out_shape[axis] += s[axis];
        pieces.push_back(random_host(rng, dtype, s));
        inputs.push_back(upload_view(rng, pieces.back(), random_offset(rng, dtype)));
      }
      // Reference: locate each output coordinate's piece along the axis.
      auto piece_of = [&](std::vector<int64_t> c, int64_t& which) {
        which = 0;
        while (c[axis] >= pieces[which].shape[axis]) c[axis] -= pieces[which++].shape[axis];
        return flat_index(pieces[which].shape, c);
      };
      HostBytes expected{dtype, out_shape,
                          std::vector<uint8_t>(element_count(out_shape) * host_element_size(dtype))};
      {
        std::vector<int64_t> c(out_shape.size());
        for (int64_t i = 0; i < element_count(out_shape); ++i) {
          int64_t rest = i;
          for (size_t d = out_shape.size(); d-- > 0;) c[d] = rest % out_shape[d], rest /= out_shape[d];
          int64_t which;
          const int64_t s = piece_of(c, which);
          std::memcpy(expected.bytes.data() + i * expected.element_size(), pieces[which].element(s),
                      expected.element_size());
        }
      }
      const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
        kernels::record_concat(layout_kc(), r, inputs, axis, out);
      });
      EXPECT_EQ(bad, 0) << "Concat " << dtype_label(dtype) << " " << shape_string(out_shape) << " axis "
                        << axis;

      // Split the concatenation back into the pieces.
      const Tensor whole = upload_view(rng, expected, random_offset(rng, dtype));
      std::vector<OutputView> outs;
      std::vector<Tensor> views;
      for (const auto& p : pieces) {
        outs.push_back(poisoned_view(dtype, p.shape, random_offset(rng, dtype)));
        views.push_back(outs.back().view);
      }
      gpu::CommandRecorder r(gpu().context);
      kernels::record_split(layout_kc(), r, whole, axis, views);
      r.submit_and_wait();
      for (size_t k = 0; k < pieces.size(); ++k) {
        EXPECT_EQ(count_mismatches(outs[k], pieces[k]), 0)
            << "Split " << dtype_label(dtype) << " piece " << k;
      }
      ++cases;
    }
  }
  std::printf("Concat/Split: %d random cases checked byte for byte\n", cases);
}

// Channel concats of batch-1 tensors (every dim before the axis 1): one dispatch of whole blocks
// (concat_blocks.h) for 32-bit elements and up to 6 inputs, the index map otherwise (float16, 7
// inputs); views at element offsets, an output poisoned around.
TEST(LayoutConcatSplit, WholeBlocksInOneDispatch) {
  Random rng(test_seed());
  const std::vector<std::pair<int, Shape>> cases = {
      {2, {1, 0, 5, 7}}, {3, {1, 0, 33, 41}}, {6, {1, 1, 0, 300}}, {7, {1, 0, 9, 8}}, {2, {0, 1000}}};
  for (DType dtype : {DType::f32, DType::i64, DType::f16}) {
    for (const auto& [parts, base] : cases) {
      const int64_t axis = std::find(base.begin(), base.end(), 0) - base.begin();
      std::vector<HostBytes> pieces;
      std::vector<Tensor> inputs;
      Shape out_shape = base;
      for (int k = 0; k < parts; ++k) {
        Shape s = base;
        s[axis] = rng.integer(1, 5);
        out_shape[axis] += s[axis];
        pieces.push_back(random_host(rng, dtype, s));
        inputs.push_back(upload_view(rng, pieces.back(), random_offset(rng, dtype)));
      }
      // Whole blocks: the expected output is the pieces' bytes one after the other.
      HostBytes expected{dtype, out_shape, {}};
      for (const HostBytes& p : pieces) expected.bytes.insert(expected.bytes.end(), p.bytes.begin(), p.bytes.end());
      gpu::CommandRecorder probe(gpu().context);
      const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
        kernels::record_concat(layout_kc(), r, inputs, axis, out);
        kernels::record_concat(layout_kc(), probe, inputs, axis, out);
      });
      EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(out_shape) << " axis " << axis;
      const bool blocks = dtype != DType::f16 && parts <= 6;
      EXPECT_EQ(probe.dispatch_count(), blocks ? 1u : static_cast<size_t>(parts)) << dtype_label(dtype) << " " << parts;
    }
  }
}

}  // namespace
}  // namespace onda::test
