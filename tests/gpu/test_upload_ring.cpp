// The upload ring (gpu/upload_ring.h): uploads of many sizes, small ones packed into one chunk, one
// larger than a chunk, and more bytes in all than the ring holds (so chunks are reused after their
// copies finish), land intact in poisoned targets; an odd size is padded without touching more;
// upload_if_ready queues only what fits without waiting for the GPU, and Tensor::upload_staged lands
// either way.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/gpu_error.h"
#include "gpu/upload_ring.h"
#include "harness.h"

namespace onda::test {
namespace {

TEST(UploadRing, UploadsLandIntactAcrossChunksAndWraps) {
  auto& g = gpu();
  Random random(test_seed());
  constexpr uint64_t kChunk = gpu::UploadRing::kChunkBytes;
  // Elements: tiny, odd-sized, one over a chunk, then enough to wrap the ring at least once.
  const std::vector<int64_t> counts = {1, 3, 1000, 12345, static_cast<int64_t>(kChunk / 4 + 777), 4096};
  std::vector<int64_t> all = counts;
  for (uint64_t total = 0; total < gpu::UploadRing::kChunks * kChunk;) {
    const int64_t n = static_cast<int64_t>(kChunk / 4 / 3 + 5);
    all.push_back(n);
    total += 4 * n;
  }
  std::vector<std::vector<float>> data;
  std::vector<Tensor> targets;
  for (int64_t n : all) {
    data.push_back(random.normal(n));
    targets.push_back(poisoned(DType::f32, {n}));
    gpu::Context& context = g.context;
    context.upload_ring().upload(context, targets.back().buffer(), targets.back().byte_offset(),
                                 data.back().data(), 4 * n);
  }
  g.context.upload_ring().flush(g.context);
  for (size_t i = 0; i < all.size(); ++i) {
    const std::vector<float> back = targets[i].download_floats(g.context);
    ASSERT_EQ(back.size(), data[i].size());
    EXPECT_EQ(std::memcmp(back.data(), data[i].data(), 4 * data[i].size()), 0) << "upload " << i;
  }
}

TEST(UploadRing, OddByteCountIsPaddedWithZeros) {
  auto& g = gpu();
  Tensor target = poisoned(DType::f32, {4});
  const uint8_t bytes[5] = {1, 2, 3, 4, 5};
  g.context.upload_ring().upload(g.context, target.buffer(), target.byte_offset(), bytes, 5);
  g.context.upload_ring().flush(g.context);
  const std::vector<uint8_t> back = target.download_bytes(g.context);
  const uint8_t expected[16] = {1, 2, 3, 4, 5, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  ASSERT_EQ(back.size(), 16u);
  EXPECT_EQ(std::memcmp(back.data(), expected, 16), 0);
}

TEST(UploadRing, UploadIfReadyQueuesWhatFitsWithoutWaitingAndNothingElse) {
  auto& g = gpu();
  gpu::Context& context = g.context;
  Random random(test_seed());
  constexpr uint64_t kChunk = gpu::UploadRing::kChunkBytes;
  // More than the whole ring holds: refused, nothing queued (the target stays poisoned).
  const int64_t too_many = static_cast<int64_t>(gpu::UploadRing::kChunks * kChunk / 4 + 1);
  const std::vector<float> big = random.normal(too_many);
  Tensor untouched = poisoned(DType::f32, {too_many});
  EXPECT_FALSE(context.upload_ring().upload_if_ready(context, untouched.buffer(), untouched.byte_offset(),
                                                     big.data(), 4 * too_many));
  context.upload_ring().flush(context);
  const std::vector<uint8_t> still = untouched.download_bytes(context);
  EXPECT_TRUE(std::all_of(still.begin(), still.end(), [](uint8_t b) { return b == 0xFF; }));
  // With the GPU idle every chunk is free: uploads of most of a chunk each, flushed one by one, go
  // through twice around the ring and land intact.
  const int64_t n = static_cast<int64_t>(kChunk / 4 * 3 / 4);
  for (size_t i = 0; i < 2 * gpu::UploadRing::kChunks; ++i) {
    context.finish();
    const std::vector<float> values = random.normal(n);
    Tensor target = poisoned(DType::f32, {n});
    ASSERT_TRUE(context.upload_ring().upload_if_ready(context, target.buffer(), target.byte_offset(),
                                                      values.data(), 4 * n))
        << "upload " << i;
    context.upload_ring().flush(context);
    const std::vector<float> back = target.download_floats(context);
    EXPECT_EQ(std::memcmp(back.data(), values.data(), 4 * n), 0) << "upload " << i;
  }
}

TEST(UploadRing, StagedUploadsLandThroughTheRingOrAQueueWrite) {
  auto& g = gpu();
  Random random(test_seed());
  // int64 (narrowed on the device) within the ring, float32 beyond it (the queue write).
  const int64_t ints = 300000;
  std::vector<int64_t> index(ints);
  for (auto& v : index) v = random.integer(-100000, 100000);
  Tensor staged = Tensor::upload_staged(g.context, g.pool, DType::i64, {ints}, index.data());
  EXPECT_EQ(download_ints(staged), index);
  const int64_t floats = static_cast<int64_t>(gpu::UploadRing::kChunks * gpu::UploadRing::kChunkBytes / 4 + 5);
  const std::vector<float> values = random.normal(floats);
  Tensor written = Tensor::upload_staged(g.context, g.pool, DType::f32, {floats}, values.data());
  const std::vector<float> back = written.download_floats(g.context);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), 4 * floats), 0);
}

TEST(UploadRing, RejectsUnalignedOffset) {
  auto& g = gpu();
  Tensor target = poisoned(DType::f32, {4});
  const float v = 1.0f;
  EXPECT_THROW(g.context.upload_ring().upload(g.context, target.buffer(), 2, &v, 4), gpu::GpuError);
}

}  // namespace
}  // namespace onda::test
