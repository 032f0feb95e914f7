// choose_step_tiling (rnn_step_tiling.h): every choice fits the workgroup limits it is given, small
// batches with a large hidden size get enough workgroups, large batches keep wide tiles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/rnn/rnn_step_tiling.h"

namespace onda::test {
namespace {

using kernels::rnn::choose_step_tiling;
using kernels::rnn::StepTiling;

int64_t workgroups(const StepTiling& t, int64_t batch, int64_t hidden, int64_t dirs) {
  return (hidden + t.units - 1) / t.units * ((batch + t.batch_tile - 1) / t.batch_tile) * dirs;
}

TEST(RnnStepTiling, FitsTheLimits) {
  for (uint64_t bytes : {16384ull, 32768ull, 49152ull}) {
    for (uint32_t invocations : {256u, 1024u, 300u}) {
      for (int64_t batch : {1, 2, 3, 64, 201}) {
        for (int64_t hidden : {1, 5, 32, 64, 100, 128, 512, 1024}) {
          for (uint32_t gates : {1u, 2u, 3u, 4u}) {
            const StepTiling t = choose_step_tiling(batch, hidden, 2, gates, bytes, invocations);
            EXPECT_LE(t.workgroup_bytes(gates), bytes) << batch << " " << hidden << " " << gates;
            EXPECT_LE(t.workgroup_size(), invocations);
            EXPECT_GE(t.units, 4u);
            EXPECT_GE(t.k_split, 1u);
            EXPECT_EQ(t.k_split & (t.k_split - 1), 0u) << "KS must be a power of two";
            EXPECT_GE(t.k_chunk, 64u);
            EXPECT_LE(t.batch_tile, 4u);
            EXPECT_LE(int64_t{t.batch_tile}, batch);
          }
        }
      }
    }
  }
}

TEST(RnnStepTiling, SpreadsSmallBatches) {
  struct Shape {
    int64_t batch, hidden, dirs;
    uint32_t gates;
  };
  for (const Shape s : {Shape{1, 512, 1, 4}, Shape{2, 256, 2, 4}, Shape{64, 128, 2, 4}, Shape{201, 128, 2, 3}}) {
    const StepTiling t = choose_step_tiling(s.batch, s.hidden, s.dirs, s.gates, 32768, 256);
    const int64_t groups = workgroups(t, s.batch, s.hidden, s.dirs);
    std::printf("  B=%lld H=%lld D=%lld G=%u: JT=%u KS=%u BT=%u KC=%u, %lld workgroups\n", (long long)s.batch,
                (long long)s.hidden, (long long)s.dirs, s.gates, t.units, t.k_split, t.batch_tile, t.k_chunk,
                (long long)groups);
    EXPECT_GE(groups, 64);
  }
  // A large batch keeps the widest tile.
  EXPECT_EQ(choose_step_tiling(201, 128, 2, 3, 32768, 256).units, 64u);
  // H512 B1: the 8 workgroups of 64-unit tiles become at least 64.
  EXPECT_LE(choose_step_tiling(1, 512, 1, 4, 32768, 256).units, 8u);
}

TEST(RnnStepTiling, TiledFitsTheLimits) {
  for (uint64_t bytes : {16384ull, 32768ull, 49152ull}) {
    for (uint32_t invocations : {256u, 1024u, 300u}) {
      for (int64_t batch : {16, 64, 85, 201, 433, 864}) {
        for (int64_t hidden : {1, 5, 32, 64, 100, 128, 256, 512, 1024}) {
          for (uint32_t gates : {1u, 2u, 3u, 4u}) {
            const auto t = kernels::rnn::choose_tiled_step_tiling(batch, hidden, 2, gates, bytes, invocations);
            EXPECT_TRUE(t.well_formed());
            EXPECT_LE(t.workgroup_bytes(gates), bytes) << batch << " " << hidden << " " << gates;
            EXPECT_LE(t.workgroup_size(), invocations);
          }
        }
      }
    }
  }
  struct Shape {
    int64_t batch, hidden;
    uint32_t gates;
  };
  for (const Shape s : {Shape{864, 256, 4}, Shape{85, 256, 4}, Shape{433, 512, 4}, Shape{85, 512, 4}, Shape{201, 128, 3},
                        Shape{321, 128, 3}, Shape{64, 128, 4}}) {
    const auto t = kernels::rnn::choose_tiled_step_tiling(s.batch, s.hidden, 2, s.gates, 49152, 1024);
    const int64_t groups = (s.hidden + t.units - 1) / t.units * ((s.batch + t.rows - 1) / t.rows) * 2;
    std::printf("  B=%lld H=%lld G=%u: BM=%u TM=%u BU=%u TU=%u KT=%u KS=%u, %lld workgroups of %u, %llu bytes\n",
                (long long)s.batch, (long long)s.hidden, s.gates, t.rows, t.thread_rows, t.units, t.thread_units, t.k_tile,
                t.k_split, (long long)groups, t.workgroup_size(), (unsigned long long)t.workgroup_bytes(s.gates));
  }
}

// choose_vec4_step_tiling: within the limits it is given, and the H200's best tilings for SCNet's
// shapes (bench_rnn --sweep, docs/benchmark-log.md).
TEST(RnnStepTiling, Vec4FitsTheLimits) {
  for (uint64_t bytes : {16384ull, 32768ull, 49152ull}) {
    for (uint32_t invocations : {256u, 1024u, 300u}) {
      for (int64_t batch : {32, 85, 201, 433, 864}) {
        const auto t = kernels::rnn::choose_vec4_step_tiling(batch, bytes, invocations);
        EXPECT_TRUE(t.well_formed());
        EXPECT_LE(t.workgroup_bytes(), bytes) << batch;
        EXPECT_LE(t.workgroup_size(), invocations) << batch;
      }
    }
  }
  const auto mid = kernels::rnn::choose_vec4_step_tiling(85, 49152, 1024);
  EXPECT_EQ(mid.rows(), 32u);
  EXPECT_EQ(mid.units(), 32u);
  EXPECT_EQ(mid.k_split, 2u);
  const auto large = kernels::rnn::choose_vec4_step_tiling(864, 49152, 1024);
  EXPECT_EQ(large.rows(), 32u);
  EXPECT_EQ(large.units(), 16u);
  EXPECT_EQ(large.k_tile, 16u);
}

// choose_row_sequence_tiling: the H200's best tilings for the models' shapes (bench_rnn's rows
// variants, docs/benchmark-log.md), and every choice within the limits it is given.
TEST(RnnStepTiling, RowSequenceChoices) {
  using kernels::rnn::RowSequenceTiling;
  const auto same = [](const RowSequenceTiling& a, const RowSequenceTiling& b) {
    return a.rows == b.rows && a.thread_rows == b.thread_rows && a.unit_vector == b.unit_vector &&
           a.k_split == b.k_split && a.k_block == b.k_block;
  };
  const auto choose = [](int64_t batch, int64_t hidden, uint32_t gates) {
    return kernels::rnn::choose_row_sequence_tiling(batch, hidden, 2, gates, 49152, 1024);
  };
  EXPECT_TRUE(same(choose(101, 128, 3), RowSequenceTiling{1, 1, 4, 8, 8}));  // MP-SENet freq GRU
  EXPECT_TRUE(same(choose(321, 128, 3), RowSequenceTiling{1, 1, 4, 4, 8}));  // MP-SENet time GRU
  EXPECT_TRUE(same(choose(85, 256, 4), RowSequenceTiling{2, 1, 4, 4, 4}));   // SCNet time LSTM
  for (uint64_t bytes : {16384ull, 32768ull, 49152ull}) {
    for (uint32_t invocations : {256u, 1024u}) {
      for (int64_t batch : {1, 2, 85, 321, 1000}) {
        for (int64_t hidden : {1, 5, 32, 100, 128, 256, 512, 1024}) {
          for (uint32_t gates : {1u, 3u, 4u}) {
            const RowSequenceTiling t = kernels::rnn::choose_row_sequence_tiling(batch, hidden, 2, gates, bytes, invocations);
            EXPECT_TRUE(t.well_formed(hidden)) << batch << " " << hidden << " " << gates;
            EXPECT_LE(t.workgroup_size(hidden), invocations) << batch << " " << hidden << " " << gates;
            EXPECT_LE(t.workgroup_bytes(hidden, gates), bytes) << batch << " " << hidden << " " << gates;
          }
        }
      }
    }
  }
}

TEST(RnnStepTiling, ResidentChoices) {
  using kernels::rnn::ResidentTiling;
  const auto choose = [](int64_t batch, int64_t hidden, uint32_t gates) {
    const ResidentTiling t = kernels::rnn::choose_resident_tiling(batch, hidden, 2, gates, 1024);
    return std::pair{t.rows, t.slice_vectors};
  };
  // MP-SENet's GRUs: 4 slices of 32 (512 invocations); 2 rows (102 workgroups), 4 rows (162: over
  // the target, but 4 is the most rows 4 slices apply).
  EXPECT_EQ(choose(101, 128, 3), std::pair(2u, 8u));
  EXPECT_EQ(choose(321, 128, 3), std::pair(4u, 8u));
  EXPECT_EQ(choose(1, 64, 4), std::pair(1u, 8u));  // UVR's LSTMs: 2 slices of 32, one of 32
  EXPECT_EQ(choose(1, 32, 4), std::pair(1u, 8u));
  EXPECT_EQ(choose(64, 128, 4), std::pair(1u, 4u));  // LSTMs on many workgroups keep KQ 4
  EXPECT_EQ(kernels::rnn::ResidentTiling({1, 8}).slices(128), 4u);
  EXPECT_EQ(kernels::rnn::ResidentTiling({1, 8}).slices(100), 4u);  // 4 slices of 32 >= 100
  EXPECT_EQ(kernels::rnn::ResidentTiling({1, 8}).slices(20), 1u);
  EXPECT_EQ(kernels::rnn::ResidentTiling({1, 4}).slices(37), 4u);   // 3 slices of 16 rounded up to 4
  for (uint32_t invocations : {256u, 1024u}) {
    for (int64_t batch : {1, 2, 85, 321, 1000}) {
      for (int64_t hidden : {1, 5, 32, 100, 128}) {
        for (uint32_t gates : {1u, 3u, 4u}) {
          const ResidentTiling t = kernels::rnn::choose_resident_tiling(batch, hidden, 2, gates, invocations);
          EXPECT_TRUE(t.well_formed(hidden)) << batch << " " << hidden << " " << gates;
          if (hidden * 4 <= 16 * invocations) {  // with slices of 64 entries the workgroup fits
            EXPECT_LE(t.workgroup_size(hidden), invocations) << batch << " " << hidden << " " << gates;
          }
        }
      }
    }
  }
}

TEST(RnnStepTiling, CooperativeCandidates) {
  using kernels::rnn::CooperativeTiling;
  for (int64_t batch : {1, 2, 5, 64, 85, 128}) {
    for (int64_t hidden : {7, 48, 128, 256, 512, 1000}) {
      for (uint32_t gates : {1u, 3u, 4u}) {
        for (uint32_t max_slices : {0u, 4u, 32u}) {
          const auto candidates = kernels::rnn::cooperative_tiling_candidates(batch, hidden, 256, max_slices);
          ASSERT_FALSE(candidates.empty());
          for (const CooperativeTiling& t : candidates) {
            SCOPED_TRACE(fmt::format("B={} H={} G={} max slices {}: JT={} BM={} KQ={} RC={}", batch, hidden, gates,
                                     max_slices, t.units, t.rows, t.slice_vectors, t.row_chunks));
            EXPECT_TRUE(t.well_formed(hidden));
            EXPECT_LE(t.workgroup_size(hidden), 256u);
            EXPECT_LE(t.workgroup_bytes(hidden, gates, false), 48u * 1024);
            EXPECT_EQ(t.row_chunks, 1u);
            EXPECT_LE(t.rows, std::max<int64_t>(batch, 1));
            if (max_slices > 0 && t.slice_vectors < 16) {
              EXPECT_LE(t.slices(hidden), max_slices);
            }
          }
          // KQ = 8 first (fewer slices to sum: the H200's best), 256 invocations before 128.
          if (max_slices == 0 || max_slices >= 32) {
            EXPECT_GE(candidates.front().slice_vectors, 8u);
          }
        }
      }
    }
  }
  // H = 512, one row: KQ 8 gives 16 slices and JT 16 (the H200's fastest for LSTM H512 B1).
  const CooperativeTiling t = kernels::rnn::cooperative_tiling_candidates(1, 512, 1024, 32).front();
  EXPECT_EQ(t.slices(512), 16u);
  EXPECT_EQ(t.units, 16u);
  EXPECT_EQ(t.rows, 1u);
}

}  // namespace
}  // namespace onda::test
