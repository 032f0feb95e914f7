// Gather and ScatterND against byte-exact CPU references: random data shapes, axes, index ranks
// and negative indices, int32 and int64 indices, every data dtype, views with element offsets.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "kernels/layout/gather.h"
#include "kernels/layout/scatter_nd.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

Tensor upload_indices(Random& rng, const std::vector<int64_t>& values, const Shape& shape, DType dtype) {
  HostBytes h{dtype, shape, {}};
  if (dtype == DType::i64) {
    h.bytes.resize(values.size() * 8);
    std::memcpy(h.bytes.data(), values.data(), h.bytes.size());
  } else {
    std::vector<int32_t> narrow(values.begin(), values.end());
    h.bytes.resize(narrow.size() * 4);
    std::memcpy(h.bytes.data(), narrow.data(), h.bytes.size());
  }
  return upload_view(rng, h, random_offset(rng, dtype));
}

TEST(LayoutGather, RandomAxesAndIndexRanksEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 8; ++trial) {
      const Shape data_shape = random_shape(rng, 1, 4, 7);
      const int64_t axis = rng.integer(0, static_cast<int64_t>(data_shape.size()) - 1);
      const Shape index_shape = random_shape(rng, 0, 3, 4);
      const int64_t dim = data_shape[axis];
      std::vector<int64_t> index_values(element_count(index_shape));
      for (auto& v : index_values) v = rng.integer(-dim, dim - 1);
      const DType index_dtype = trial % 2 ? DType::i64 : DType::i32;
      const HostBytes data = random_host(rng, dtype, data_shape);
      const Shape out_shape = kernels::gather_output_shape(data_shape, index_shape, axis);
      const size_t ir = index_shape.size();
      const HostBytes expected = reference_gather(data, out_shape, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> dc(c.begin(), c.begin() + axis);
        std::vector<int64_t> ic(c.begin() + axis, c.begin() + axis + ir);
        int64_t v = index_values[flat_index(index_shape, ic)];
        dc.push_back(v < 0 ? v + dim : v);
        dc.insert(dc.end(), c.begin() + axis + ir, c.end());
        return flat_index(data_shape, dc);
      });
      const Tensor data_t = upload_view(rng, data, random_offset(rng, dtype));
      const Tensor index_t = upload_indices(rng, index_values, index_shape, index_dtype);
      OutputView out = poisoned_view(dtype, out_shape, random_offset(rng, dtype));
      gpu::CommandRecorder r(gpu().context);
      kernels::record_gather(
          layout_kc(), r, data_t, index_t, axis, out.view,
          trial % 3 ? std::optional<std::span<const int64_t>>(index_values) : std::nullopt);
      r.submit_and_wait();
      EXPECT_EQ(count_mismatches(out, expected), 0)
          << dtype_name(dtype) << " data " << shape_string(data_shape) << " axis " << axis << " indices "
          << shape_string(index_shape);
      ++cases;
    }
  }
  std::printf("Gather: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutGather, OutOfRangeIndicesThrowOnHostAndClampOnGpu) {
  Random rng(test_seed());
  const Shape data_shape = {5, 3};
  const HostBytes data = random_host(rng, DType::f32, data_shape);
  const Tensor data_t = upload_view(rng, data, 0);
  const std::vector<int64_t> bad = {1, 9, -8};
  const Tensor index_t = upload_indices(rng, bad, {3}, DType::i64);
  OutputView out = poisoned_view(DType::f32, {3, 3}, 0);
  gpu::CommandRecorder r(gpu().context);
  EXPECT_THROW(
      kernels::record_gather(layout_kc(), r, data_t, index_t, 0, out.view, std::span<const int64_t>(bad)),
      std::out_of_range);
  kernels::record_gather(layout_kc(), r, data_t, index_t, 0, out.view);
  r.submit_and_wait();
  // 9 clamps to 4; -8 wraps to -3, then clamps to 0.
  const std::vector<int64_t> rows = {1, 4, 0};
  const HostBytes expected =
      reference_gather(data, {3, 3}, [&](const std::vector<int64_t>& c) { return rows[c[0]] * 3 + c[1]; });
  EXPECT_EQ(count_mismatches(out, expected), 0);
}

TEST(LayoutScatterND, RandomTuplesEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 6; ++trial) {
      const Shape data_shape = random_shape(rng, 1, 4, 6);
      const int64_t q = rng.integer(1, static_cast<int64_t>(data_shape.size()));
      // Distinct tuples (duplicates are undefined in ONNX), some written with negative indices.
      int64_t tuples = 1;
      for (int64_t j = 0; j < q; ++j) tuples *= data_shape[j];
      std::vector<int64_t> order(tuples);
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng.engine());
      const int64_t rows = rng.integer(1, tuples);
      Shape index_shape = rows % 2 == 0 && rows > 2 ? Shape{2, rows / 2, q} : Shape{rows, q};
      const int64_t used = element_count(index_shape) / q;
      std::vector<int64_t> index_values;
      for (int64_t r = 0; r < used; ++r) {
        int64_t rest = order[r];
        std::vector<int64_t> tuple(q);
        for (int64_t j = q; j-- > 0;) tuple[j] = rest % data_shape[j], rest /= data_shape[j];
        for (int64_t j = 0; j < q; ++j)
          index_values.push_back(rng.integer(0, 1) ? tuple[j] : tuple[j] - data_shape[j]);
      }
      Shape update_shape(index_shape.begin(), index_shape.end() - 1);
      update_shape.insert(update_shape.end(), data_shape.begin() + q, data_shape.end());
      const HostBytes data = random_host(rng, dtype, data_shape);
      const HostBytes updates = random_host(rng, dtype, update_shape);
      int64_t slice = 1;
      for (size_t d = q; d < data_shape.size(); ++d) slice *= data_shape[d];
      HostBytes expected = data;
      for (int64_t r = 0; r < used; ++r) {
        int64_t base = 0;
        for (int64_t j = 0; j < q; ++j) {
          const int64_t v = index_values[r * q + j];
          base = base * data_shape[j] + (v < 0 ? v + data_shape[j] : v);
        }
        std::memcpy(expected.bytes.data() + base * slice * expected.element_size(),
                    updates.element(r * slice), slice * expected.element_size());
      }
      const Tensor data_t = upload_view(rng, data, random_offset(rng, dtype));
      const Tensor updates_t = upload_view(rng, updates, random_offset(rng, dtype));
      const Tensor index_t =
          upload_indices(rng, index_values, index_shape, trial % 2 ? DType::i64 : DType::i32);
      OutputView out = poisoned_view(dtype, data_shape, random_offset(rng, dtype));
      gpu::CommandRecorder r(gpu().context);
      kernels::record_scatter_nd(layout_kc(), r, data_t, index_t, updates_t, out.view,
                                 std::span<const int64_t>(index_values));
      r.submit_and_wait();
      EXPECT_EQ(count_mismatches(out, expected), 0)
          << dtype_name(dtype) << " data " << shape_string(data_shape) << " indices "
          << shape_string(index_shape);
      ++cases;
    }
  }
  std::printf("ScatterND: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutScatterND, RejectsBadShapesAndIndices) {
  Random rng(test_seed());
  const Tensor data = upload_view(rng, random_host(rng, DType::f32, {4, 3}), 0);
  const std::vector<int64_t> idx = {4};
  const Tensor index_t = upload_indices(rng, idx, {1, 1}, DType::i64);
  const Tensor updates = upload_view(rng, random_host(rng, DType::f32, {1, 3}), 0);
  const Tensor wrong_updates = upload_view(rng, random_host(rng, DType::f32, {1, 4}), 0);
  Tensor out = poisoned(DType::f32, {4, 3});
  gpu::CommandRecorder r(gpu().context);
  EXPECT_THROW(
      kernels::record_scatter_nd(layout_kc(), r, data, index_t, updates, out, std::span<const int64_t>(idx)),
      std::out_of_range);
  EXPECT_THROW(kernels::record_scatter_nd(layout_kc(), r, data, index_t, wrong_updates, out),
               std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
