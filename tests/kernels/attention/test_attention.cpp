// The fused attention kernel (kernels/attention) against float64 softmax(scale * Q K^T) V over
// random shapes: one query row, key counts off the tile size, odd and large head dims, K given
// transposed, float16, and a batch split over storage bindings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/attention/attention.h"

namespace onda::test {
namespace {

struct AttentionCase {
  int64_t batch, lq, lk, d, dv;
  bool k_transposed;
  DType dtype;
};

// out[b, i, :] = sum_j softmax_j(scale * q[b, i, :] . k[b, j, :]) v[b, j, :] in float64; k is
// read as [B, Lk, D], or as K^T [B, D, Lk].
std::vector<double> reference(const AttentionCase& c, float scale, const std::vector<float>& q,
                              const std::vector<float>& k, const std::vector<float>& v) {
  std::vector<double> out(static_cast<size_t>(c.batch * c.lq * c.dv));
  std::vector<double> s(static_cast<size_t>(c.lk));
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t i = 0; i < c.lq; ++i) {
      double m = -INFINITY;
      for (int64_t j = 0; j < c.lk; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < c.d; ++d) {
          const int64_t ki = c.k_transposed ? (b * c.d + d) * c.lk + j : (b * c.lk + j) * c.d + d;
          dot += double(q[(b * c.lq + i) * c.d + d]) * k[ki];
        }
        s[j] = scale * dot;
        m = std::max(m, s[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < c.lk; ++j) sum += s[j] = std::exp(s[j] - m);
      for (int64_t e = 0; e < c.dv; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < c.lk; ++j) acc += s[j] * v[(b * c.lk + j) * c.dv + e];
        out[(b * c.lq + i) * c.dv + e] = acc / sum;
      }
    }
  }
  return out;
}

double run_case(const AttentionCase& c, Random& rng, uint32_t key_splits = 1) {
  kernels::KernelTuning tuning;
  tuning.attention.key_splits = key_splits;
  const Shape q_shape{c.batch, c.lq, c.d}, v_shape{c.batch, c.lk, c.dv}, out_shape{c.batch, c.lq, c.dv};
  const Shape k_shape = c.k_transposed ? Shape{c.batch, c.d, c.lk} : Shape{c.batch, c.lk, c.d};
  const auto q = round_to_dtype(rng.normal(element_count(q_shape)), c.dtype);
  const auto k = round_to_dtype(rng.normal(element_count(k_shape)), c.dtype);
  const auto v = round_to_dtype(rng.normal(element_count(v_shape)), c.dtype);
  // Scores of a few units: the softmax is neither flat nor one-hot.
  const float scale = static_cast<float>(1.5 / std::sqrt(static_cast<double>(c.d)));
  Tensor tq = upload_floats(q, c.dtype, q_shape), tk = upload_floats(k, c.dtype, k_shape),
         tv = upload_floats(v, c.dtype, v_shape), out = poisoned(c.dtype, out_shape);
  gpu::CommandRecorder recorder(gpu().context);
  kernels::AttentionOptions options;
  options.scale = scale;
  options.k_transposed = c.k_transposed;
  kernels::record_attention({gpu().context, gpu().pipelines, tuning}, recorder, gpu().pool, tq, tk, tv,
                            options, out);
  recorder.submit_and_wait();
  const double e = rel_l2(out.download_floats(gpu().context), reference(c, scale, q, k, v));
  std::printf("  B %lld Lq %lld Lk %lld D %lld Dv %lld%s %s, key splits %u, lanes %lld: rel L2 %.2e\n",
              static_cast<long long>(c.batch), static_cast<long long>(c.lq), static_cast<long long>(c.lk),
              static_cast<long long>(c.d), static_cast<long long>(c.dv), c.k_transposed ? " K^T" : "",
              std::string(dtype_name(c.dtype)).c_str(), key_splits,
              static_cast<long long>(kernels::attention_lanes({gpu().context, gpu().pipelines, tuning}, c.d, c.dv)), e);
  return e;
}

TEST(Attention, MatchesFloat64OverShapes) {
  Random rng(test_seed());
  const AttentionCase cases[] = {
      {1, 1, 1, 1, 1, false, DType::f32},        {2, 1, 37, 64, 64, false, DType::f32},  // one query row
      {3, 70, 33, 64, 64, false, DType::f32},    {3, 70, 33, 64, 64, true, DType::f32},  // Lk off the tile
      {4, 17, 100, 16, 16, true, DType::f32},    {2, 5, 64, 13, 7, false, DType::f32},   // odd head dims
      {1, 130, 65, 128, 128, false, DType::f32}, {6, 64, 32, 64, 64, false, DType::f32},
      {2, 31, 45, 64, 64, true, DType::f16},     {1, 3, 300, 20, 24, false, DType::f16}};
  for (const AttentionCase& c : cases) {
    const double e = run_case(c, rng, 1);
    EXPECT_LE(e, c.dtype == DType::f32 ? 2e-6 : 2e-3)
        << "B " << c.batch << " Lq " << c.lq << " Lk " << c.lk << " D " << c.d << " Dv " << c.dv;
  }
  // Random shapes over the head dims compiled above (each new head dim is a pipeline to compile,
  // seconds on lavapipe).
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t d = trial % 2 ? 64 : 16;
    const AttentionCase c{rng.integer(1, 5), rng.integer(1, 150), rng.integer(1, 150), d, d,
                          trial >= 2,        DType::f32};
    EXPECT_LE(run_case(c, rng), 2e-6) << "B " << c.batch << " Lq " << c.lq << " Lk " << c.lk << " D " << c.d;
  }
}

// Row pairs (attention.wgsl's LANES = 2 where the device has subgroups; each lane half of the head
// dims, the scores summed by a subgroup shuffle): head dims that pad to the pair, Lq odd (a pair
// straddling the last row), K^T, split keys (the pair's first lane stores the partial max and sum)
// and float16. Head dims below 8 keep one lane per row (covered above: D 1, Dv 7).
TEST(Attention, RowPairsMatchFloat64) {
  Random rng(test_seed());
  const kernels::KernelContext kc{gpu().context, gpu().pipelines, kernels::default_kernel_tuning()};
  const bool pairs = kernels::attention_lanes(kc, 64, 64) == 2;
  std::printf("  row pairs on this device: %s\n", pairs ? "yes" : "no (one lane per row)");
  EXPECT_EQ(kernels::attention_lanes(kc, 64, 7), 1);
  const std::pair<AttentionCase, uint32_t> cases[] = {
      {{2, 67, 37, 64, 64, true, DType::f32}, 1},  {{1, 65, 70, 20, 12, false, DType::f32}, 1},
      {{3, 7, 33, 20, 24, false, DType::f16}, 1},  {{2, 33, 300, 64, 64, false, DType::f32}, 3},
      {{1, 63, 129, 36, 8, true, DType::f32}, 2}};
  for (const auto& [c, splits] : cases) {
    EXPECT_LE(run_case(c, rng, splits), c.dtype == DType::f32 ? 2e-6 : 2e-3)
        << "B " << c.batch << " Lq " << c.lq << " Lk " << c.lk << " D " << c.d << " Dv " << c.dv;
  }
}

// Keys cut into slices (attention.wgsl's SPLIT), merged by attention_combine.wgsl: even and uneven
// slices, more slices asked for than keys, K transposed, float16 and odd head dims.
TEST(Attention, SplitKeysMatchFloat64) {
  Random rng(test_seed());
  const std::pair<AttentionCase, uint32_t> cases[] = {
      {{2, 70, 300, 64, 64, false, DType::f32}, 2}, {{3, 33, 301, 64, 64, true, DType::f32}, 3},
      {{1, 5, 3, 16, 16, false, DType::f32}, 8},    {{2, 31, 200, 13, 7, false, DType::f32}, 7},
      {{2, 17, 129, 64, 64, true, DType::f16}, 4},  {{1, 130, 1000, 16, 16, false, DType::f32}, 5}};
  for (const auto& [c, splits] : cases) {
    const double e = run_case(c, rng, splits);
    EXPECT_LE(e, c.dtype == DType::f32 ? 2e-6 : 2e-3)
        << "B " << c.batch << " Lq " << c.lq << " Lk " << c.lk << " splits " << splits;
  }
  // The automatic rule (key_splits 0, the default) on a shape it splits: few rows, many keys.
  const AttentionCase few_rows{1, 16, 1024, 16, 16, false, DType::f32};
  const kernels::KernelTuning by_rule;
  EXPECT_GT(kernels::attention_key_splits({gpu().context, gpu().pipelines, by_rule},
                                          few_rows.batch * few_rows.lq, few_rows.lk),
            1);
  EXPECT_LE(run_case(few_rows, rng, 0), 2e-6);
}

// Operands that are transposed views of their tensors (PyTorch's MultiheadAttention layout, folded
// into the node): each of q, k, v and out under its own permutation, split keys too.
TEST(Attention, TransposedOperandsMatchFloat64) {
  Random rng(test_seed());
  struct Case {
    int64_t batch, lq, lk, d;
    std::vector<int64_t> q_perm, k_perm, v_perm, o_perm;
    uint32_t splits;
  };
  const Case cases[] = {
      {4, 37, 29, 16, {1, 0, 2}, {1, 2, 0}, {1, 0, 2}, {1, 0, 2}, 1},  // MP-SENet / HTDemucs: [L, B, D]
      {3, 20, 70, 64, {1, 0, 2}, {1, 0, 2}, {1, 0, 2}, {1, 0, 2}, 3},
      {2, 9, 41, 13, {2, 1, 0}, {0, 2, 1}, {2, 0, 1}, {0, 2, 1}, 2},
      {3, 11, 23, 8, {0, 2, 1}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, 1},  // every stride of the output moved
  };
  for (const Case& c : cases) {
    kernels::KernelTuning tuning;
    tuning.attention.key_splits = c.splits;
    // A logical [B, R, C] operand in a tensor whose dim perm[i] is logical dim i.
    struct Source {
      Tensor tensor;
      std::vector<float> data;
      Shape shape;
      std::vector<int64_t> perm;
      size_t index(int64_t b, int64_t r, int64_t col) const {
        int64_t coord[3];
        coord[perm[0]] = b;
        coord[perm[1]] = r;
        coord[perm[2]] = col;
        return static_cast<size_t>((coord[0] * shape[1] + coord[1]) * shape[2] + coord[2]);
      }
    };
    auto source = [&](Shape logical, const std::vector<int64_t>& perm, bool poison) {
      Source src;
      src.perm = perm;
      src.shape = Shape(3);
      for (size_t i = 0; i < 3; ++i) src.shape[static_cast<size_t>(perm[i])] = logical[i];
      if (poison) {
        src.tensor = poisoned(DType::f32, src.shape);
      } else {
        src.data = rng.normal(element_count(src.shape));
        src.tensor = upload_floats(src.data, DType::f32, src.shape);
      }
      return src;
    };
    const Source q = source({c.batch, c.lq, c.d}, c.q_perm, false), k = source({c.batch, c.lk, c.d}, c.k_perm, false),
                 v = source({c.batch, c.lk, c.d}, c.v_perm, false), o = source({c.batch, c.lq, c.d}, c.o_perm, true);
    const float scale = static_cast<float>(1.5 / std::sqrt(static_cast<double>(c.d)));
    gpu::CommandRecorder recorder(gpu().context);
    using kernels::AttentionOperand;
    kernels::record_attention({gpu().context, gpu().pipelines, tuning}, recorder, gpu().pool,
                              AttentionOperand::transposed(q.tensor, c.q_perm),
                              AttentionOperand::transposed(k.tensor, c.k_perm),
                              AttentionOperand::transposed(v.tensor, c.v_perm), scale,
                              AttentionOperand::transposed(o.tensor, c.o_perm));
    recorder.submit_and_wait();
    // The operands and the output in their logical order: the float64 reference above applies.
    auto logical = [](const Source& src, const std::vector<float>& data, int64_t rows, int64_t cols, int64_t batch) {
      std::vector<float> out;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t col = 0; col < cols; ++col) out.push_back(data[src.index(b, r, col)]);
      return out;
    };
    const std::vector<double> expected =
        reference({c.batch, c.lq, c.lk, c.d, c.d, false, DType::f32}, scale, logical(q, q.data, c.lq, c.d, c.batch),
                  logical(k, k.data, c.lk, c.d, c.batch), logical(v, v.data, c.lk, c.d, c.batch));
    const std::vector<float> got_logical =
        logical(o, o.tensor.download_floats(gpu().context), c.lq, c.d, c.batch);
    const double e = rel_l2(got_logical, expected);
    std::printf("  B %lld Lq %lld Lk %lld D %lld, splits %u: rel L2 %.2e\n", static_cast<long long>(c.batch),
                static_cast<long long>(c.lq), static_cast<long long>(c.lk), static_cast<long long>(c.d), c.splits, e);
    EXPECT_LE(e, 2e-6);
  }
}

TEST(Attention, KeySplitsRule) {
  kernels::KernelTuning by_rule;
  by_rule.attention.key_splits = 0;
  const kernels::KernelContext kc{gpu().context, gpu().pipelines, by_rule};
  // Enough rows: one slice; few rows: slices of at least kAttentionMinSliceKeys keys.
  EXPECT_EQ(kernels::attention_key_splits(kc, kernels::kAttentionBusyRows, 100000), 1);
  EXPECT_EQ(kernels::attention_key_splits(kc, 8 * 2688, 2688), 4);
  EXPECT_EQ(kernels::attention_key_splits(kc, 16, 1024), 1024 / kernels::kAttentionMinSliceKeys);
  EXPECT_EQ(kernels::attention_key_splits(kc, 16, 100), 1);
  kernels::KernelTuning tuning;
  tuning.attention.key_splits = 6;
  const kernels::KernelContext tuned{gpu().context, gpu().pipelines, tuning};
  EXPECT_EQ(kernels::attention_key_splits(tuned, kernels::kAttentionBusyRows, 4096), 6);
  EXPECT_EQ(kernels::attention_key_splits(tuned, 16, 3), 3);  // never more slices than keys
}

// K and V larger than one storage binding: the batch is split into slices, each its own dispatch.
TEST(Attention, SplitsTheBatchOverStorageBindings) {
  const uint64_t limit = gpu().context.limits().maxStorageBufferBindingSize;
  const int64_t lk = 64, d = 16;
  const uint64_t per_batch = static_cast<uint64_t>(lk * d) * 4;
  if (limit > (uint64_t{256} << 20))
    GTEST_SKIP() << "binding limit " << limit << " bytes: too large a test here";
  Random rng(test_seed());
  const AttentionCase c{static_cast<int64_t>(limit / per_batch) + 3, 1, lk, d, d, false, DType::f32};
  EXPECT_LE(run_case(c, rng), 2e-6);
}

TEST(Attention, RejectsBadShapes) {
  gpu::CommandRecorder recorder(gpu().context);
  const kernels::KernelContext kc{gpu().context, gpu().pipelines};
  Tensor q = poisoned(DType::f32, {2, 3, 8}), k = poisoned(DType::f32, {2, 5, 8}),
         v = poisoned(DType::f32, {2, 5, 4});
  Tensor out = poisoned(DType::f32, {2, 3, 4}), wrong = poisoned(DType::f32, {2, 3, 8});
  EXPECT_THROW(kernels::record_attention(kc, recorder, gpu().pool, q, k, v, {}, wrong),
               std::invalid_argument);
  kernels::AttentionOptions transposed;
  transposed.k_transposed = true;
  EXPECT_THROW(kernels::record_attention(kc, recorder, gpu().pool, q, k, v, transposed, out),
               std::invalid_argument);
  Tensor big_q = poisoned(DType::f32, {1, 1, 300}), big_k = poisoned(DType::f32, {1, 2, 300});
  EXPECT_THROW(
      kernels::record_attention(kc, recorder, gpu().pool, big_q, big_k, poisoned(DType::f32, {1, 2, 4}), {},
                                poisoned(DType::f32, {1, 1, 4})),
      std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
