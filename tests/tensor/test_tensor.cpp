// Tensors: every dtype survives an upload/download round trip (through its GPU storage type),
// views address the right elements, bad shapes and out-of-range int64 are rejected.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "harness.h"
#include "tensor/half.h"

namespace onda::test {
namespace {

TEST(Tensor, RoundTripsEveryDtype) {
  Random rng(test_seed());
  const Shape shape = {3, 5, 7};
  const int64_t n = element_count(shape);
  for (DType dtype : {DType::f32, DType::f16, DType::i32, DType::i64, DType::u8, DType::boolean}) {
    std::vector<uint8_t> host(n * host_element_size(dtype));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = rng.integer(-100000, 100000);
      switch (dtype) {
        case DType::f32: { float f = static_cast<float>(v) * 0.37f; std::memcpy(&host[4 * i], &f, 4); break; }
        case DType::f16: { uint16_t h = float_to_half(static_cast<float>(v % 2000) * 0.5f); std::memcpy(&host[2 * i], &h, 2); break; }
        case DType::i32: { int32_t x = static_cast<int32_t>(v); std::memcpy(&host[4 * i], &x, 4); break; }
        case DType::i64: std::memcpy(&host[8 * i], &v, 8); break;
        case DType::u8: host[i] = static_cast<uint8_t>(v); break;
        case DType::boolean: host[i] = v > 0; break;
      }
    }
    Tensor t = Tensor::upload(gpu().context, gpu().pool, dtype, shape, host.data());
    EXPECT_EQ(t.download_bytes(gpu().context), host) << dtype_name(dtype);
  }
}

TEST(Tensor, HalfConversionRoundsToNearestEven) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(1e6f), 0x7c00);
  EXPECT_EQ(float_to_half(1.0f + 1.0f / 2048), 0x3c00);  // tie to even
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  for (uint32_t h = 0; h < 0x7c00; ++h) ASSERT_EQ(float_to_half(half_to_float(static_cast<uint16_t>(h))), h);
}

TEST(Tensor, ViewsShareStorage) {
  std::vector<float> values(24);
  for (int i = 0; i < 24; ++i) values[i] = static_cast<float>(i);
  Tensor t = upload_floats(values, DType::f32, {4, 6});
  Tensor rows = t.slice_outer(1, 3);
  EXPECT_EQ(rows.shape(), (Shape{2, 6}));
  auto got = rows.download_floats(gpu().context);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], values[6 + i]);
  EXPECT_EQ(t.reshape({2, 12}).download_floats(gpu().context), values);
  EXPECT_THROW(t.reshape({5, 5}), std::invalid_argument);
  EXPECT_THROW(t.slice_outer(2, 5), std::out_of_range);
}

TEST(Tensor, RejectsInt64OutOfInt32Range) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_THROW(Tensor::upload(gpu().context, gpu().pool, DType::i64, {1}, &big), std::out_of_range);
}

}  // namespace
}  // namespace onda::test
