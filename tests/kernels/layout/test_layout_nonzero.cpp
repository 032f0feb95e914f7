// The NonZero stream compaction (kernels/layout/nonzero.h) against a CPU reference: random shapes
// from one element to several scan chunks (over 256 blocks of 256), every dtype class (f32 with
// -0.0 and NaN, f16, int64, bool), densities from empty to full, the count read back as the
// runtime does and the coordinates written into a poisoned output.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "graph/host_tensor.h"
#include "harness.h"
#include "kernels/layout/nonzero.h"

namespace onda::test {
namespace {

// Values of which about `density` are nonzero; zeros include -0.0 for floats, nonzeros a NaN.
HostTensor sparse_values(Random& rng, DType dtype, const Shape& shape, double density) {
  const int64_t n = shape_numel(shape);
  const std::vector<float> draw = rng.uniform(static_cast<size_t>(n), 0, 1);
  const std::vector<float> magnitude = rng.uniform(static_cast<size_t>(n), 0.5, 4);
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) {
    if (draw[i] < density) {
      values[i] = i % 7 == 0 ? -magnitude[i] : std::round(magnitude[i] * 4) / 4;
      if (is_float(dtype) && i % 97 == 5) values[i] = std::nan("");
    } else {
      values[i] = (is_float(dtype) && i % 2) ? -0.0 : 0.0;
    }
  }
  if (is_float(dtype)) return HostTensor::from_double(dtype, shape, values);
  std::vector<int64_t> ints(values.begin(), values.end());
  if (dtype == DType::i64)
    for (int64_t i = 0; i < n; ++i)
      ints[i] = values[i] == 0 ? 0 : (i % 3 ? ints[i] : -(int64_t{1} << 20) - i);
  return HostTensor::from_int64(dtype, shape, ints);
}

// The coordinates NonZero must give: [rank (1 for a scalar), count] row-major.
std::vector<int64_t> reference(const HostTensor& x) {
  const Shape shape = x.shape().empty() ? Shape{1} : x.shape();
  const std::vector<double> v = x.to_double();
  std::vector<int64_t> positions;
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] != 0.0) positions.push_back(static_cast<int64_t>(i));
  const int64_t rank = static_cast<int64_t>(shape.size()), count = static_cast<int64_t>(positions.size());
  std::vector<int64_t> out(rank * count);
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = positions[k];
    for (int64_t d = rank - 1; d >= 0; --d) out[d * count + k] = rest % shape[d], rest /= shape[d];
  }
  return out;
}

void check_nonzero(const HostTensor& x, const std::string& what) {
  const Tensor input = Tensor::upload(gpu().context, gpu().pool, x.dtype(), x.shape(), x.data());
  gpu::CommandRecorder recorder(gpu().context);
  const kernels::NonzeroCount counted = kernels::record_nonzero_count(kc(), recorder, gpu().pool, input);
  recorder.submit_and_wait();
  const int64_t count = download_ints(counted.count).at(0);
  const std::vector<int64_t> want = reference(x);
  const int64_t rank = std::max<int64_t>(x.rank(), 1);
  ASSERT_EQ(count * rank, static_cast<int64_t>(want.size())) << what;
  const Tensor indices = poisoned(DType::i64, {rank, count});
  gpu::CommandRecorder scatter(gpu().context);
  kernels::record_nonzero_indices(kc(), scatter, input, counted, indices);
  scatter.submit_and_wait();
  if (count == 0) return;
  const std::vector<int64_t> got = download_ints(indices);
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_EQ(got[i], want[i]) << what << ": coordinate " << i / count << " of nonzero element " << i % count;
}

TEST(LayoutNonzero, RandomShapesDtypesAndDensities) {
  Random rng(test_seed());
  const DType dtypes[] = {DType::f32, DType::f16, DType::i64, DType::boolean};
  for (int trial = 0; trial < 16; ++trial) {
    const int rank = static_cast<int>(rng.integer(1, 4));
    Shape shape(rank);
    for (auto& d : shape) d = rng.integer(1, trial % 4 == 0 ? 40 : 9);
    const DType dtype = dtypes[trial % 4];
    const double density = trial % 5 == 0 ? 1.0 : trial % 5 == 1 ? 0.02 : 0.4;
    check_nonzero(sparse_values(rng, dtype, shape, density),
                  fmt::format("{} {} density {}", dtype_name(dtype), shape_string(shape), density));
  }
}

TEST(LayoutNonzero, ManyBlocksScalarsAndEmpty) {
  Random rng(test_seed());
  // 300,000 elements: 1172 blocks, so the scan walks five chunks of 256 with a carry.
  check_nonzero(sparse_values(rng, DType::f32, {3, 100000}, 0.3), "f32 [3, 100000]");
  check_nonzero(sparse_values(rng, DType::f16, {70001}, 0.9), "f16 [70001]");
  check_nonzero(sparse_values(rng, DType::f32, {}, 1.0), "a nonzero scalar");
  check_nonzero(sparse_values(rng, DType::f32, {}, 0.0), "a zero scalar");
  check_nonzero(sparse_values(rng, DType::f32, {4, 600}, 0.0), "all zero");
  check_nonzero(HostTensor(DType::f32, {3, 0}), "empty");
}

}  // namespace
}  // namespace onda::test
