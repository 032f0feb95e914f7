#include "kernels/gemm/gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "gpu/gpu_error.h"
#include "kernels/shader_template.h"

namespace onda::kernels::gemm {

namespace {

// Mirrors `Params` in gemm_common.wgsl (vec4 members first: uniform layout needs 16-byte alignment).
struct GemmParams {
  uint32_t batch_shape[4];
  uint32_t a_batch_stride[4];
  uint32_t b_batch_stride[4];
  uint32_t d_batch_stride[4];
  uint32_t m, n, k, batch_base;
  uint32_t a_offset, a_ld, b_offset, b_ld;
  uint32_t c_offset, d_offset, d_row_stride, d_col_stride;
  float alpha, beta, activation_alpha;
  uint32_t b_k_limit;
  uint32_t k_step_runtime;
  uint32_t r_offset;
  uint32_t part_stride;
  uint32_t perm_col_stride2;      // OutputPermutation::col_stride[1]
  uint32_t perm_radix[4];         // row_radix[0..1], col_radix[0..1]
  uint32_t perm_stride[4];        // row_stride[0..2], col_stride[0]
};
static_assert(sizeof(GemmParams) == 176);

constexpr int64_t kMaxU32 = std::numeric_limits<uint32_t>::max();

uint32_t narrow_u32(int64_t v, const char* what) {
  if (v < 0 || v > kMaxU32) {
    throw gpu::DeviceLimitError(
        fmt::format("gemm: {} = {} does not fit the shader's 32-bit indices", what, v));
  }
  return static_cast<uint32_t>(v);
}

void require_float(DType t, const char* what) {
  if (!is_float(t)) {
    throw std::invalid_argument(
        fmt::format("gemm: {} must be float32 or float16, got {}", what, dtype_name(t)));
  }
}

std::string flag(bool b) {
  return b ? "1" : "0";
}

// Tile shapes of the tiled path, largest first: {WG_X, WG_Y, TM, BK, NV} -> BM = WG_Y*TM, BN = 4*NV*WG_X.
struct TileShape {
  uint32_t wg_x, wg_y, tm, bk, nv = 1;
  constexpr uint32_t bm() const { return wg_y * tm; }
  constexpr uint32_t bn() const { return wg_x * 4 * nv; }
  constexpr uint32_t threads() const { return wg_x * wg_y; }
  // copies: 2 for a double-buffered variant
  uint64_t workgroup_bytes(uint32_t copies = 1) const { return uint64_t{copies} * bk * (bm() + bn()) * 4; }
  bool operator==(const TileShape&) const = default;
};

// Whether the device's workgroup limits admit the tile (with `copies` staged copies).
bool tile_within_limits(const TileShape& t, const wgpu::Limits& limits, uint32_t copies) {
  return t.workgroup_bytes(copies) <= limits.maxComputeWorkgroupStorageSize &&
         t.threads() <= limits.maxComputeInvocationsPerWorkgroup &&
         t.wg_x <= limits.maxComputeWorkgroupSizeX && t.wg_y <= limits.maxComputeWorkgroupSizeY;
}
// The small tile steps K by 8: it serves small problems, where a deep K step is mostly padding.
constexpr TileShape kTileShapes[] = {{16, 16, 8, 16}, {16, 16, 4, 16}, {8, 8, 4, 8}};
// The large tile for a K-contiguous B (transposed or prepacked): a K step of 32 makes each staged
// row of both operands one whole 128-byte line (32 floats) instead of half of one, halving the
// number of distinct line / page touches and barriers per FLOP. Row-major B's loads are already
// whole lines along N. 24 KiB of workgroup memory: fits lavapipe's 32 KiB and any WebGPU device.
constexpr TileShape kTileLargeKContiguous{16, 16, 8, 32};
// 128 x 128 with 8 x 8 outputs per thread and a K step of 16, for a K-contiguous B at least 256
// columns wide: on an H100 (2026-12-06, GemmBench.TuningSweep) it beat the 128 x 64 tile above on
// every K-contiguous shape, most where that tile fell off a cliff: BS-RoFormer's FFN down
// [49662 x 2048] x [2048 x 512] 5.5 -> 34.2 TFLOP/s, 4096^3 with B^T 9.0 -> 21.4, FFN up 31.1 -> 34.3,
// the SCNet- and conv-like shapes 28-29 -> 30-32 (docs/benchmarks.md). 16 KiB of workgroup memory.
constexpr TileShape kTileLargeSquareKContiguous{16, 16, 8, 16, 2};
// The fewest 128 x 128 tiles of a problem that takes that tile (4x an H100's 132 SMs, rounded).
constexpr int64_t kMinSquareTiles = 512;
// 64 x 64 with 8 x 4 outputs per thread (128 threads) and a K step of 16, grouped, for a K-contiguous
// B where the 128 x 64 tile above makes fewer than kMinLargeTiles tiles: on an H100 (2026-12-07,
// GemmBench.TuningSweep) it beat that tile on all seven such shapes of HTDemucs and MP-SENet, by
// 1.03x ([32421 x 64] x [64 x 192], 762 tiles) to 1.39x ([2688 x 2048] x [2048 x 512], 168 tiles)
// and 1.25x ([2688 x 512] x [512 x 2048], 672 tiles); larger problems were not measured with it.
constexpr TileShape kTileMidKContiguous{16, 8, 8, 16};
constexpr int64_t kMinLargeTiles = 1024;

// Narrow tiles for a row-major B with few columns (attention's softmax(QK^T) V: N = head size 16 or
// 32, M = K = sequence length, a batch of heads x frames): all of N in one tile, 64 rows, so no
// column of the tile is padding and A (the big operand) is read once. BN < 32 cannot XOR-swizzle a
// K-contiguous B (see tile_fits), which is why they serve a row-major B only.
constexpr TileShape kTileNarrow16{4, 16, 4, 16};  // 64 x 16, 64 threads
constexpr TileShape kTileNarrow32{8, 16, 4, 16};  // 64 x 32, 128 threads

constexpr bool power_of_two_at_least_8(uint32_t v) {
  return v >= 8 && (v & (v - 1)) == 0;
}
// What gemm_tiled.wgsl needs of a tile: TM a multiple of 4, BK in {4, 8, 16, 32} (swz_k divides 32 by
// it), whole loads per thread, and, for an operand staged from K-contiguous storage (A untransposed,
// B transposed or prepacked), rows of BM / 4 (BN / 4) vec4 slots that are powers of two of at least 8,
// since its slots are XOR-swizzled with values below 8 (swz_k).
constexpr bool tile_fits(const TileShape& t, bool a_k_contiguous, bool b_k_contiguous) {
  return t.tm % 4 == 0 && t.tm > 0 && t.wg_x > 0 && t.wg_y > 0 &&
         (t.bk == 4 || t.bk == 8 || t.bk == 16 || t.bk == 32) && (t.bm() * t.bk / 4) % t.threads() == 0 &&
         (t.bn() * t.bk / 4) % t.threads() == 0 && t.bn() * t.bk / 4 >= t.threads() &&
         t.bm() * t.bk / 4 >= t.threads() && (!a_k_contiguous || power_of_two_at_least_8(t.bm() / 4)) &&
         (!b_k_contiguous || power_of_two_at_least_8(t.bn() / 4));
}
static_assert(tile_fits(kTileLargeSquareKContiguous, true, true) && tile_fits(kTileShapes[0], true, true) &&
              tile_fits(kTileShapes[1], true, true) && tile_fits(kTileShapes[2], true, true) &&
              tile_fits(kTileLargeKContiguous, true, true) && tile_fits(kTileMidKContiguous, true, true) &&
              tile_fits(kTileNarrow16, true, false) &&
              tile_fits(kTileNarrow32, true, true));

}  // namespace

std::string_view activation_name(Activation activation) {
  switch (activation) {
    case Activation::none:
      return "none";
    case Activation::relu:
      return "relu";
    case Activation::leaky_relu:
      return "leaky_relu";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::tanh:
      return "tanh";
    case Activation::gelu_erf:
      return "gelu_erf";
  }
  return "?";
}

std::string GemmVariant::describe() const {
  if (path == GemmPath::skinny) {
    return fmt::format("skinny{} KS={} NC={}x{} rows={} {}", swap_operands ? " (C^T = B^T A^T)" : "", ks, nc,
                       nt, 4 * mv, subgroup_reduce ? "subgroup" : "workgroup");
  }
  return fmt::format("tiled {}x{} (threads {}x{}, {}x{} each) BK={}{}{}{}{}{}", wg_y * tm, wg_x * 4 * nv,
                     wg_x, wg_y, tm, 4 * nv, bk, group_m ? fmt::format(" group-M {}", group_m) : "",
                     unroll_k ? "" : " k-loop", for_unroll ? " #for" : "", double_buffer ? " 2-buf" : "",
                     vec_store ? " vec4-store" : "");
}

GemmProblem GemmProblem::with_packed_b(const Shape& a_shape, DType a_dtype, bool transpose_a,
                                       const PackedB& b) {
  GemmProblem p;
  p.a_shape = a_shape;
  p.a_dtype = a_dtype;
  p.transpose_a = transpose_a;
  p.b_shape = {b.k, b.n};
  p.b_dtype = b.dtype();
  p.b_prepacked = true;
  return p;
}

Gemm::Gemm(const KernelContext& kc, GemmProblem problem, GemmOptions options)
    : kc_(kc), problem_(std::move(problem)), options_(options) {
  const gpu::Context& context = kc_.gpu;
  require_float(problem_.a_dtype, "A");
  require_float(problem_.b_dtype, "B");
  require_float(problem_.out_dtype, "the output");
  if (problem_.addend_shape) require_float(problem_.addend_dtype, "the addend");
  if (problem_.b_prepacked) {
    if (problem_.transpose_b)
      throw std::invalid_argument("gemm: a prepacked B carries its transpose already");
    if (problem_.b_shape.size() != 2) {
      throw std::invalid_argument("gemm: a prepacked B is 2-D, got " + shape_string(problem_.b_shape));
    }
    // Packed storage is op(B)^T = [N, K_pad]: the layout of a transposed B with a padded row stride.
    layout_ = plan_matmul_layout(problem_.a_shape, problem_.transpose_a,
                                 {problem_.b_shape[1], problem_.b_shape[0]}, true, problem_.addend_shape);
    layout_.b_row_stride = packed_row_length(layout_.k);
  } else {
    layout_ = plan_matmul_layout(problem_.a_shape, problem_.transpose_a, problem_.b_shape,
                                 problem_.transpose_b, problem_.addend_shape);
  }

  const bool b_k_contiguous = problem_.b_prepacked || problem_.transpose_b;
  const bool a_k_contiguous = !problem_.transpose_a;
  GemmPath path = options.path;
  bool swap = false;
  if (problem_.column_parts != 1) {
    const int64_t parts = problem_.column_parts;
    if (parts < 1 || layout_.n % parts != 0 || (layout_.n / parts) % 4 != 0) {
      throw std::invalid_argument(fmt::format("gemm: {} column parts of N = {} (each a multiple of 4 wide)",
                                              parts, layout_.n));
    }
    if (path != GemmPath::automatic && path != GemmPath::tiled)
      throw std::invalid_argument("gemm: column parts need the tiled path");
    path = GemmPath::tiled;
  }
  if (const auto& perm = problem_.output_permutation) {
    if (problem_.column_parts != 1) throw std::invalid_argument("gemm: a permuted output in column parts");
    if (perm->col_radix[0] % 4 != 0 || perm->row_radix[0] == 0 || perm->row_radix[1] == 0 ||
        perm->col_radix[1] == 0 || layout_.n % perm->col_radix[0] != 0) {
      throw std::invalid_argument(
          fmt::format("gemm: a permuted output's innermost column digit ({} of N = {}) must be a multiple of 4 "
                      "dividing N",
                      perm->col_radix[0], layout_.n));
    }
    // Every element inside the output (the kernels write without bounds checks).
    const int64_t rows = layout_.batch_count * layout_.m, r01 = int64_t{perm->row_radix[0]} * perm->row_radix[1],
                  c01 = int64_t{perm->col_radix[0]} * perm->col_radix[1];
    const int64_t last = (perm->row_radix[0] - 1) * int64_t{perm->row_stride[0]} +
                         (perm->row_radix[1] - 1) * int64_t{perm->row_stride[1]} +
                         (rows / r01 - 1) * int64_t{perm->row_stride[2]} + (perm->col_radix[0] - 1) +
                         (perm->col_radix[1] - 1) * int64_t{perm->col_stride[0]} +
                         (layout_.n / c01 - 1) * int64_t{perm->col_stride[1]};
    if (rows % r01 != 0 || layout_.n % c01 != 0 || last >= rows * layout_.n) {
      throw std::invalid_argument(fmt::format(
          "gemm: the output permutation (row radices {}, {}, column radices {}, {}) does not map the [{}, {}] "
          "product into itself",
          perm->row_radix[0], perm->row_radix[1], perm->col_radix[0], perm->col_radix[1], rows, layout_.n));
    }
    if (problem_.epilogue.program.residual)
      throw std::invalid_argument("gemm: a permuted output with a residual in its epilogue");
    if (path != GemmPath::automatic && path != GemmPath::tiled)
      throw std::invalid_argument("gemm: a permuted output needs the tiled path");
    path = GemmPath::tiled;
  }
  if (path == GemmPath::automatic) {
    // The skinny path streams B once per block of rows: it wins for up to 16 rows, and up to 64 while
    // B is small (it won at M = 64 with a small B and lost with a large one; docs/benchmark-log.md).
    // Attention's [T, T] x [T, 64] products
    // (HTDemucs: T = 2688, 8 heads) are tiled work, not matrix-vector products.
    const auto skinny_fits = [&](int64_t rows, int64_t cols) {
      return rows <= 16 || (rows <= 64 && layout_.batch_count * cols * layout_.k <= (int64_t{1} << 22));
    };
    // The skinny shader reads its A (op(B)^T when swapped) as rows of K: stored transposed, each lane
    // of a subgroup loads scalars 4 rows apart, so one load instruction touches 32 cache lines.
    // MP-SENet's softmax(QK^T) V with B row-major ran far below the tiled path's speed swapped onto
    // the skinny path (docs/benchmark-log.md). Only a vector is as good as K-contiguous there.
    const bool b_rows_ok = b_k_contiguous || layout_.n == 1;
    const bool a_rows_ok = a_k_contiguous || layout_.m == 1;
    if (layout_.m <= 64 && b_k_contiguous && a_rows_ok && skinny_fits(layout_.m, layout_.n)) {
      path = GemmPath::skinny;
    } else if (layout_.n < 64 && layout_.n < layout_.m && a_k_contiguous && b_rows_ok &&
               skinny_fits(layout_.n, layout_.m)) {
      // Few columns, many rows (a matrix-vector product): C^T = op(B)^T op(A)^T is the skinny case.
      // Not at 64 columns: MP-SENet's [32421 x 64] x [64 x 64] out-projections ran 2x faster tiled.
      path = GemmPath::skinny;
      swap = true;
    } else {
      path = GemmPath::tiled;
    }
  } else if (path == GemmPath::skinny_transposed) {
    if (!a_k_contiguous)
      throw std::invalid_argument("gemm: the transposed skinny path needs A stored K-contiguous");
    path = GemmPath::skinny;
    swap = true;
  } else if (path == GemmPath::skinny && !b_k_contiguous) {
    throw std::invalid_argument(
        "gemm: the skinny path needs B stored K-contiguous (transpose_b or prepacked)");
  }
  if (options.variant) {
    variant_ = *options.variant;
    check_variant(context, variant_);
    return;
  }
  variant_ =
      path == GemmPath::skinny ? choose_skinny(context, options, swap) : choose_tiled(context, options);
}

void Gemm::check_variant(const gpu::Context& context, const GemmVariant& v) const {
  const auto& limits = context.limits();
  const bool b_k_contiguous = problem_.b_prepacked || problem_.transpose_b;
  if (v.path == GemmPath::tiled) {
    const TileShape t{v.wg_x, v.wg_y, v.tm, v.bk, v.nv};
    if (v.nv != 1 && v.nv != 2 && v.nv != 4)
      throw std::invalid_argument("gemm: NV (vec4s of B per thread) must be 1, 2 or 4");
    if (!tile_fits(t, !problem_.transpose_a, b_k_contiguous)) {
      throw std::invalid_argument("gemm: the tile " + v.describe() +
                                  " does not fit this problem's operand layout");
    }
    if (!tile_within_limits(t, limits, v.double_buffer ? 2 : 1)) {
      throw gpu::DeviceLimitError("gemm: the tile " + v.describe() +
                                  " exceeds this device's workgroup limits");
    }
    return;
  }
  if (v.path != GemmPath::skinny)
    throw std::invalid_argument("gemm: a forced variant must be tiled or skinny");
  if (v.swap_operands ? problem_.transpose_a : !b_k_contiguous) {
    throw std::invalid_argument("gemm: the skinny variant needs its shader B stored K-contiguous");
  }
  // The workgroup reduction has thread s < MV of each column group add up row block s: KS >= MV.
  if (v.ks < 4 || v.nc == 0 || v.nt == 0 || v.mv == 0 || v.ks < v.mv) {
    throw std::invalid_argument("gemm: bad skinny variant " + v.describe());
  }
  if (v.subgroup_reduce &&
      (!context.has(gpu::Feature::Subgroups) || context.subgroup_min_size() != context.subgroup_max_size() ||
       v.ks != context.subgroup_max_size())) {
    throw std::invalid_argument(
        "gemm: the subgroup reduction needs KS equal to the device's one subgroup size");
  }
  const uint64_t bytes = v.subgroup_reduce ? 0 : uint64_t{v.mv} * v.ks * v.nc * 16;
  if (bytes > limits.maxComputeWorkgroupStorageSize ||
      v.ks * v.nc > limits.maxComputeInvocationsPerWorkgroup) {
    throw gpu::DeviceLimitError("gemm: the skinny variant " + v.describe() +
                                " exceeds this device's workgroup limits");
  }
}

GemmVariant Gemm::choose_tiled(const gpu::Context& context, const GemmOptions& options) const {
  const auto& limits = context.limits();
  // Big tiles only where they fill the grid (an H200 has 132 SMs); small problems get small tiles so
  // that little of each tile is padding.
  size_t first = 2;
  if (layout_.m >= 256 && layout_.n >= 128) {
    first = 0;
  } else if (layout_.m >= 64 && layout_.n >= 64) {
    first = 1;
  }
  const bool b_k_contiguous = problem_.transpose_b || problem_.b_prepacked;
  std::vector<TileShape> candidates(std::begin(kTileShapes) + first, std::end(kTileShapes));
  if (first == 0 && b_k_contiguous) {
    const TileShape& large = kTileLargeKContiguous;
    const int64_t large_tiles = layout_.batch_count * ((layout_.m + large.bm() - 1) / large.bm()) *
                                ((layout_.n + large.bn() - 1) / large.bn());
    candidates.insert(candidates.begin(), large_tiles < kMinLargeTiles ? kTileMidKContiguous : large);
    // Only where its tiles still fill a large GPU several times over: at HTDemucs's [2688 x 2048] x
    // [2048 x 512] (84 tiles of 128 x 128, 168 of 128 x 64) the model ran 35.5 -> 44.8 ms on an H100.
    const TileShape& square = kTileLargeSquareKContiguous;
    const int64_t square_tiles = layout_.batch_count * ((layout_.m + square.bm() - 1) / square.bm()) *
                                 ((layout_.n + square.bn() - 1) / square.bn());
    if (layout_.n >= 256 && square_tiles >= kMinSquareTiles)
      candidates.insert(candidates.begin(), kTileLargeSquareKContiguous);
  }
  // Few columns of a row-major B and enough rows: one narrow tile spans all of N. The 64x32 tile,
  // even half empty at N = 16, beat 64x16 (MP-SENet's attention x V; docs/benchmark-log.md).
  if (!b_k_contiguous && layout_.m >= 64 && layout_.n <= 32) {
    candidates.insert(candidates.begin(), kTileNarrow32);
  }
  // Besides the 128 x 128 K-contiguous tile, the 128-row tiles stay 4 columns wide per thread
  // (NV = 1): widened to TM x 8 (NV = 2) they ran slower on an H200 for a row-major B, at large and
  // small sizes and on whole models (docs/benchmark-log.md); on the H100 sweep above a row-major B's
  // best tile still depended on the shape. Tests and sweeps reach NV = 2 and 4 through
  // GemmOptions::variant and GemmTuning::tile.
  const GemmTuning& tuning = options.tuning;
  std::optional<uint32_t> tuned_group_m;  // set when the tuning's tile replaces the automatic one
  if (tuning.tile) {
    const GemmTile& g = *tuning.tile;
    const TileShape t{g.wg_x, g.wg_y, g.tm, g.bk, g.nv};
    // A tile the problem fills at least once, the shader can run on this layout and the device admits.
    if ((g.nv == 1 || g.nv == 2 || g.nv == 4) && layout_.m >= t.bm() && layout_.n >= t.bn() &&
        tile_fits(t, !problem_.transpose_a, b_k_contiguous) && tile_within_limits(t, limits, 1)) {
      candidates.assign(1, t);
      tuned_group_m = g.group_m;
    }
  }
  for (const TileShape& t : candidates) {
    if (!tile_fits(t, !problem_.transpose_a, b_k_contiguous)) continue;
    if (!tile_within_limits(t, limits, 1)) continue;
    GemmVariant v;
    v.path = GemmPath::tiled;
    v.wg_x = t.wg_x;
    v.wg_y = t.wg_y;
    v.tm = t.tm;
    v.bk = t.bk;
    v.nv = t.nv;
    v.unroll_k =
        options.unroll_k.value_or(tuning.unroll_k.value_or(context.adapter_description().type != "CPU"));
    v.for_unroll = tuning.for_unroll;
    v.double_buffer = tuning.double_buffer && tile_within_limits(t, limits, 2);
    v.vec_store = tuning.vec_store;
    if (tuned_group_m) {
      v.group_m = *tuned_group_m;
    } else if (t == kTileLargeKContiguous || t == kTileLargeSquareKContiguous || t == kTileMidKContiguous) {
      // Grouped tile order for the large K-contiguous-B tiles (see GROUP_M in gemm_tiled.wgsl).
      v.group_m = 8;
    }
    return v;
  }
  throw gpu::DeviceLimitError("gemm: no tile shape fits this device's workgroup limits");
}

GemmVariant Gemm::choose_skinny(const gpu::Context& context, const GemmOptions& options, bool swap) const {
  GemmVariant v;
  v.path = GemmPath::skinny;
  v.swap_operands = swap;
  const uint32_t sg = context.subgroup_max_size();
  const int64_t rows = swap ? layout_.n : layout_.m;
  const int64_t cols = swap ? layout_.m : layout_.n;
  const bool blocking = options.skinny_blocking.value_or(context.adapter_description().type != "CPU");
  // One subgroupAdd reduces a column only when every subgroup has the same, known size. With the
  // 16-row blocks (more than 16 rows) the workgroup reduction measured faster on an H200.
  const bool row_blocks = rows > 16 && blocking;
  if (options.allow_subgroups && !row_blocks && context.has(gpu::Feature::Subgroups) &&
      sg == context.subgroup_min_size() && sg >= 4 && sg <= 128 && (sg & (sg - 1)) == 0) {
    v.ks = sg;
    v.subgroup_reduce = true;
  } else {
    v.ks = 32;
  }
  v.nc = std::max<uint32_t>(256 / v.ks, 1);
  // Rows per workgroup (4 * MV) and columns per thread group (NT). On an H200, with NT = 1 the time
  // grows linearly in M whatever MV is, presumably because every A vec4 (an L1 hit) feeds only 4 FMA and
  // every B slice is re-read per 8-row block. Past 16 rows, 16-row blocks with 4 columns per thread group
  // load each A vec4 once for 4 columns and each B vec4 once for 16 rows (not yet measured).
  // NT shrinks for narrow problems so that the grid still has enough workgroups.
  v.mv = rows <= 4 ? 1 : rows <= 16 || !blocking ? 2 : 4;
  v.nt = rows <= 16 || !blocking ? 1 : cols >= 1024 ? 4 : cols >= 256 ? 2 : 1;
  // The sweep (bench_gemm GemmBench.SkinnySweep) found shorter K splits with 2 columns per thread group
  // and a workgroup reduction faster from 5 to 64 rows (docs/benchmark-log.md).
  if (blocking && rows > 4 && rows <= 64 && cols >= 256) {
    v.subgroup_reduce = false;
    v.ks = rows <= 32 ? 16 : 8;
    v.nc = 256 / v.ks;
    v.nt = 2;
    v.mv = rows <= 16 ? 1 : 2;
  }
  // (The workgroup reduction has thread s < MV of each column group add up row block s: KS >= 4 >= MV.)
  const uint64_t bytes = v.subgroup_reduce ? 0 : uint64_t{v.mv} * v.ks * v.nc * 16;
  if (bytes > context.limits().maxComputeWorkgroupStorageSize ||
      v.ks * v.nc > context.limits().maxComputeInvocationsPerWorkgroup) {
    throw gpu::DeviceLimitError("gemm: the skinny path does not fit this device's workgroup limits");
  }
  return v;
}

namespace {

void check_tensor(const Tensor& x, const Shape& shape, DType dtype, const char* what) {
  if (!x.defined()) throw std::invalid_argument(fmt::format("gemm: {} tensor missing", what));
  if (x.shape() != shape || x.dtype() != dtype) {
    throw std::invalid_argument(fmt::format("gemm: {} is {} {}, the plan expects {} {}", what,
                                            dtype_name(x.dtype()), shape_string(x.shape()), dtype_name(dtype),
                                            shape_string(shape)));
  }
}

// Checks the tensors against the plan; returns the B the shaders read (a prepacked B's data).
Tensor checked_b(const GemmProblem& p, const MatmulLayout& layout, const GemmTensors& t) {
  check_tensor(t.a, p.a_shape, p.a_dtype, "A");
  Tensor b = t.b;
  if (p.b_prepacked) {
    if (!t.packed_b) throw std::invalid_argument("gemm: the plan expects a prepacked B, none given");
    if (t.packed_b->k != p.b_shape[0] || t.packed_b->n != p.b_shape[1] || t.packed_b->dtype() != p.b_dtype) {
      throw std::invalid_argument(fmt::format("gemm: packed B is {} {}x{}, the plan expects {} {}",
                                              dtype_name(t.packed_b->dtype()), t.packed_b->k, t.packed_b->n,
                                              dtype_name(p.b_dtype), shape_string(p.b_shape)));
    }
    b = t.packed_b->data;
    if (b.shape() != Shape{t.packed_b->n, t.packed_b->k_pad()}) {
      throw std::invalid_argument(fmt::format("gemm: packed B data is {}, its k = {}, n = {} need [{}, {}]",
                                              shape_string(b.shape()), t.packed_b->k, t.packed_b->n,
                                              t.packed_b->n, t.packed_b->k_pad()));
    }
  } else {
    check_tensor(b, p.b_shape, p.b_dtype, "B");
  }
  check_tensor(t.out, layout.output_shape, p.out_dtype, "the output");
  if (p.addend_shape) {
    check_tensor(t.addend, *p.addend_shape, p.addend_dtype, "the addend");
  } else if (t.addend.defined()) {
    throw std::invalid_argument("gemm: an addend was given but the plan has none");
  }
  if (p.epilogue.program.residual) {
    check_tensor(t.residual, layout.output_shape, p.out_dtype, "the residual");
  } else if (t.residual.defined()) {
    throw std::invalid_argument("gemm: a residual was given but the plan's epilogue has none");
  }
  return b;
}

// The uniforms of the product (gemm_common.wgsl's Params) in the shader's operand order: with
// swapped operands the shader's A is op(B)^T and its B is op(A)^T, and C is stored transposed.
GemmParams make_params(gpu::Context& context, const GemmProblem& p, const MatmulLayout& layout,
                       const GemmVariant& v, const GemmTensors& t, bool swap, const Tensor& shader_a,
                       const Tensor& shader_b, int64_t shader_m, int64_t shader_n, int64_t a_ld) {
  GemmParams params{};
  const size_t dims = layout.batch_shape.size();
  for (size_t i = 0; i < 4; ++i) {
    params.batch_shape[i] = 1;
    if (i + dims >= 4) {
      const size_t j = i + dims - 4;
      params.batch_shape[i] = narrow_u32(layout.batch_shape[j], "a batch dimension");
      params.a_batch_stride[i] =
          narrow_u32((swap ? layout.b_batch_strides : layout.a_batch_strides)[j], "a batch stride");
      params.b_batch_stride[i] =
          narrow_u32((swap ? layout.a_batch_strides : layout.b_batch_strides)[j], "a batch stride");
      params.d_batch_stride[i] = narrow_u32(layout.addend_batch_strides[j], "a batch stride");
    }
  }
  params.m = narrow_u32(shader_m, "M");
  params.n = narrow_u32(shader_n, "N");
  params.k = narrow_u32(layout.k, "K");
  params.a_offset = shader_a.element_offset(context);
  params.a_ld = narrow_u32(a_ld, "A's row stride");
  params.b_offset = shader_b.element_offset(context);
  params.b_ld = narrow_u32(swap ? layout.a_row_stride : layout.b_row_stride, "B's row stride");
  params.c_offset = t.out.element_offset(context);
  if (layout.has_addend) {
    params.d_offset = t.addend.element_offset(context);
    const int64_t row = swap ? layout.addend_col_stride : layout.addend_row_stride;
    const int64_t col = swap ? layout.addend_row_stride : layout.addend_col_stride;
    params.d_row_stride = narrow_u32(row, "the addend's row stride");
    params.d_col_stride = narrow_u32(col, "the addend's column stride");
  }
  params.alpha = p.epilogue.alpha;
  params.beta = p.epilogue.beta;
  params.activation_alpha = p.epilogue.activation_alpha;
  // A prepacked B's zero padding may be read (A is zero there), which keeps its rows vector-aligned.
  params.b_k_limit = p.b_prepacked && !swap ? params.b_ld : params.k;
  params.k_step_runtime = v.bk;
  if (t.residual.defined()) params.r_offset = t.residual.element_offset(context);
  params.part_stride = narrow_u32(layout.batch_count * layout.m * (layout.n / p.column_parts), "a column part");
  if (const auto& perm = p.output_permutation) {
    params.perm_radix[0] = perm->row_radix[0];
    params.perm_radix[1] = perm->row_radix[1];
    params.perm_radix[2] = perm->col_radix[0];
    params.perm_radix[3] = perm->col_radix[1];
    for (size_t i = 0; i < 3; ++i) params.perm_stride[i] = perm->row_stride[i];
    params.perm_stride[3] = perm->col_stride[0];
    params.perm_col_stride2 = perm->col_stride[1];
  }
  return params;
}

}  // namespace

void Gemm::record(gpu::CommandRecorder& recorder, const GemmTensors& t) const {
  gpu::Context& context = kc_.gpu;
  gpu::PipelineCache& pipelines = kc_.pipelines;
  const GemmProblem& p = problem_;
  const Tensor b = checked_b(p, layout_, t);
  if (t.out.numel() == 0) return;
  const uint64_t device_limit = context.limits().maxStorageBufferBindingSize;
  const uint64_t limit =
      options_.max_binding_bytes ? std::min(options_.max_binding_bytes, device_limit) : device_limit;
  // A binding starts up to one offset alignment before the tensor and ends on a 16-byte boundary.
  const uint64_t slack = context.limits().minStorageBufferOffsetAlignment + 16;
  auto oversize = [&](const Tensor& x) { return x.defined() && x.device_bytes() + slack > limit; };
  if (oversize(t.a) || oversize(t.out) || oversize(t.addend) || oversize(t.residual)) {
    record_row_blocks(recorder, t, limit - std::min(limit, slack));
    return;
  }
  if (oversize(b)) {
    throw gpu::DeviceLimitError(fmt::format(
        "gemm: B ({} bytes) exceeds the storage binding limit of {} bytes", b.device_bytes(), limit));
  }
  // WebGPU forbids binding one buffer as read-only and writable in the same dispatch.
  for (const Tensor* x : std::initializer_list<const Tensor*>{&t.a, &b, &t.addend, &t.residual}) {
    if (x->defined() && x->buffer().Get() == t.out.buffer().Get()) {
      throw std::invalid_argument(
          "gemm: the output shares a buffer with an input (in-place GEMM is not supported)");
    }
  }

  for (const Tensor* x : std::initializer_list<const Tensor*>{&t.a, &b, &t.out, &t.addend, &t.residual}) {
    if (x->defined()) narrow_u32(x->numel() + x->element_offset(context), "a tensor's element count");
  }
  narrow_u32(layout_.batch_count, "the batch count");

  const GemmVariant& v = variant_;
  const bool skinny = v.path == GemmPath::skinny;
  const bool swap = v.swap_operands;
  // With swapped operands the shader's A is op(B)^T and its B is op(A)^T, and C is stored transposed.
  const Tensor& shader_a = swap ? b : t.a;
  const Tensor& shader_b = swap ? t.a : b;
  const uint32_t a_off = shader_a.element_offset(context), b_off = shader_b.element_offset(context);
  const uint32_t c_off = t.out.element_offset(context);
  const bool trans_b = p.transpose_b || p.b_prepacked;
  // Vector loads need the contiguous extent, the row stride and the start aligned to 4 elements
  // (batch strides are multiples of the matrix size, hence of the row stride). A prepacked B's
  // rows are K_pad long but only K of them are the extent when it is the shader's A.
  const int64_t a_extent = swap ? (p.b_prepacked ? layout_.k : layout_.b_row_stride) : layout_.a_row_stride;
  const int64_t a_ld = swap ? layout_.b_row_stride : layout_.a_row_stride;
  const int64_t b_extent = swap ? layout_.a_row_stride : layout_.b_row_stride;
  const bool shader_a_trans = swap ? !trans_b : p.transpose_a;
  const bool a_vec = a_extent % 4 == 0 && a_ld % 4 == 0 && a_off % 4 == 0 && !(skinny && shader_a_trans);
  const bool b_vec = b_extent % 4 == 0 && b_off % 4 == 0;
  const bool out_f16 = p.out_dtype == DType::f16;
  const bool out_pairs = out_f16 && !skinny && layout_.n % 2 == 0 && c_off % 2 == 0;
  // (Batch entries of the output start at multiples of M N, hence of 4 too.)
  const bool out_vec4 = !out_f16 && !skinny && v.vec_store && layout_.n % 4 == 0 && c_off % 4 == 0;
  if (p.column_parts != 1 && c_off % 4 != 0)
    throw std::invalid_argument("gemm: an output in column parts must start at a multiple of 4 elements");

  const ShaderFlags flags{a_vec, b_vec, out_pairs, out_vec4};
  uint64_t groups_x = 0, groups_y = 0;
  const int64_t shader_m = swap ? layout_.n : layout_.m, shader_n = swap ? layout_.m : layout_.n;
  if (skinny) {
    // Row blocks along x (see gemm_skinny.wgsl: B slices are shared by consecutive workgroups).
    groups_x = (shader_m + 4 * v.mv - 1) / (4 * v.mv);
    groups_y = (shader_n + v.nc * v.nt - 1) / (v.nc * v.nt);
  } else {
    groups_x = (layout_.n + 4 * v.nv * v.wg_x - 1) / (4 * v.nv * v.wg_x);
    groups_y = (layout_.m + v.wg_y * v.tm - 1) / (v.wg_y * v.tm);
  }
  const uint32_t max_groups = context.limits().maxComputeWorkgroupsPerDimension;
  if (groups_x > max_groups || groups_y > max_groups) {
    throw gpu::DeviceLimitError(
        fmt::format("gemm: M = {}, N = {} need {} x {} workgroups; the device allows {} per "
                    "dimension (split the problem)",
                    layout_.m, layout_.n, groups_x, groups_y, max_groups));
  }
  const std::string label = fmt::format("gemm {} {}", v.describe(), activation_name(p.epilogue.activation));
  const wgpu::ComputePipeline& pipeline = pipeline_for(pipelines, flags, shader_a_trans, label);

  GemmParams params =
      make_params(context, p, layout_, v, t, swap, shader_a, shader_b, shader_m, shader_n, a_ld);
  std::vector<gpu::BufferBinding> bindings{shader_a.binding(context), shader_b.binding(context),
                                           t.out.binding(context)};
  if (layout_.has_addend) bindings.push_back(t.addend.binding(context));
  if (t.residual.defined()) bindings.push_back(t.residual.binding(context));
  // The batch runs along z; more than maxComputeWorkgroupsPerDimension entries take several dispatches.
  for (int64_t start = 0; start < layout_.batch_count; start += max_groups) {
    params.batch_base = static_cast<uint32_t>(start);
    const auto z = static_cast<uint32_t>(std::min<int64_t>(max_groups, layout_.batch_count - start));
    recorder.dispatch(pipeline, bindings, &params, sizeof(params),
                      {static_cast<uint32_t>(groups_x), static_cast<uint32_t>(groups_y), z}, label);
  }
}

void Gemm::record_row_blocks(gpu::CommandRecorder& recorder, const GemmTensors& t, uint64_t limit) const {
  const GemmProblem& p = problem_;
  if (p.column_parts != 1 || p.output_permutation) {
    throw gpu::DeviceLimitError(fmt::format(
        "gemm: an output {} ({} bytes) exceeds the storage binding limit of {} bytes",
        p.column_parts != 1 ? "in column parts" : "stored permuted", t.out.device_bytes(), limit));
  }
  // A batched A times one shared B without an addend (a linear layer over [..., M, K] activations)
  // is the 2-D product of all rows of A: flattened, its rows split like any other.
  const bool b_shared = std::all_of(layout_.b_batch_strides.begin(), layout_.b_batch_strides.end(),
                                    [](int64_t s) { return s == 0; });
  const bool flat_already = layout_.batch_count == 1 && p.a_shape.size() == 2 && t.out.rank() == 2;
  if (!flat_already && b_shared && !p.transpose_a && !layout_.has_addend && p.b_shape.size() >= 2) {
    GemmProblem flat = p;
    flat.a_shape = {layout_.batch_count * layout_.m, layout_.k};
    flat.b_shape = Shape(p.b_shape.end() - 2, p.b_shape.end());
    GemmTensors ft = t;
    ft.a = t.a.reshape(flat.a_shape);
    if (ft.b.defined()) ft.b = t.b.reshape(flat.b_shape);
    ft.out = t.out.reshape({layout_.batch_count * layout_.m, layout_.n});
    if (t.residual.defined()) ft.residual = t.residual.reshape(ft.out.shape());
    GemmOptions flat_options = options_;
    flat_options.variant.reset();
    Gemm(kc_, flat, flat_options).record(recorder, ft);
    return;
  }
  // Rows of a 2-D, untransposed A are contiguous, as are the output's: a block of rows is a view.
  if (layout_.batch_count != 1 || p.a_shape.size() != 2 || p.transpose_a || t.out.rank() != 2) {
    throw gpu::DeviceLimitError(fmt::format(
        "gemm: A {} / output {} exceed the storage binding limit of {} bytes, and only a 2-D product with an "
        "untransposed A can be split",
        shape_string(p.a_shape), shape_string(t.out.shape()), limit));
  }
  const int64_t m = layout_.m;
  // The addend splits with the rows when it has them ([M, N] or [M, 1]); otherwise it is shared.
  const bool addend_rows = layout_.has_addend && layout_.addend_row_stride != 0;
  if (addend_rows && p.addend_shape->size() != 2) {
    throw gpu::DeviceLimitError("gemm: an addend with rows must be 2-D for a split product");
  }
  uint64_t row_bytes = std::max({t.a.device_bytes(), t.out.device_bytes(),
                                 t.residual.defined() ? t.residual.device_bytes() : 0}) /
                       std::max<int64_t>(m, 1);
  if (addend_rows) row_bytes = std::max<uint64_t>(row_bytes, t.addend.device_bytes() / m);
  if (layout_.has_addend && !addend_rows && t.addend.device_bytes() > limit) {
    throw gpu::DeviceLimitError("gemm: the addend exceeds the storage binding limit");
  }
  // An even number of rows keeps every float16 block on a 32-bit word boundary.
  const int64_t rows = static_cast<int64_t>(limit / std::max<uint64_t>(row_bytes, 1)) / 2 * 2;
  if (rows < 2) {
    throw gpu::DeviceLimitError(
        fmt::format("gemm: two rows of A {} or of the output do not fit the storage "
                    "binding limit of {} bytes",
                    shape_string(p.a_shape), limit));
  }
  GemmOptions block_options = options_;
  block_options.max_binding_bytes = 0;
  for (int64_t m0 = 0; m0 < m; m0 += rows) {
    const int64_t m1 = std::min(m, m0 + rows);
    GemmProblem block = p;
    block.a_shape = {m1 - m0, p.a_shape[1]};
    GemmTensors bt = t;
    bt.a = t.a.slice_outer(m0, m1);
    bt.out = t.out.slice_outer(m0, m1);
    if (t.residual.defined()) bt.residual = t.residual.slice_outer(m0, m1);
    if (addend_rows) {
      block.addend_shape = Shape{m1 - m0, (*p.addend_shape)[1]};
      bt.addend = t.addend.slice_outer(m0, m1);
    }
    Gemm(kc_, block, block_options).record(recorder, bt);
  }
}

const wgpu::ComputePipeline& Gemm::pipeline_for(gpu::PipelineCache& pipelines, const ShaderFlags& f,
                                                bool shader_a_trans, const std::string& label) const {
  // Rendering and hashing the WGSL costs far more than a small dispatch (a recurrent cell records
  // one GEMM per step): remember the pipeline per cache and alignment flags.
  for (const auto& m : pipelines_) {
    if (m.cache == &pipelines && m.flags == f) return *m.pipeline;
  }
  const GemmProblem& p = problem_;
  const GemmVariant& v = variant_;
  const bool skinny = v.path == GemmPath::skinny;
  const bool out_f16 = p.out_dtype == DType::f16;
  const bool swap = v.swap_operands;
  TemplateValues values{
      {"A_F16", flag((swap ? p.b_dtype : p.a_dtype) == DType::f16)},
      {"B_F16", flag((swap ? p.a_dtype : p.b_dtype) == DType::f16)},
      {"ADDEND_F16", flag(p.addend_dtype == DType::f16)},
      {"A_VEC", flag(f.a_vec)},
      {"B_VEC", flag(f.b_vec)},
      {"A_TRANS", flag(shader_a_trans)},
      {"B_TRANS", flag(swap || p.transpose_b || p.b_prepacked)},
      {"OUT_TRANS", flag(swap)},
      {"OUT_F32", flag(!out_f16)},
      {"OUT_F16_PAIRS", flag(f.out_pairs)},
      {"OUT_F16_ATOMIC", flag(out_f16 && !f.out_pairs)},
      {"OUT_VEC4", flag(f.out_vec4)},
      {"HAS_ADDEND", flag(layout_.has_addend)},
      {"HAS_RESIDUAL", flag(p.epilogue.program.residual)},
      {"RESIDUAL_F16", flag(p.epilogue.program.residual && out_f16)},
      {"RESIDUAL_BINDING", layout_.has_addend ? "4" : "3"},
      {"PARAMS_BINDING", std::to_string(3 + (layout_.has_addend ? 1 : 0) + (p.epilogue.program.residual ? 1 : 0))},
      {"COLUMN_PARTS", flag(p.column_parts != 1)},
      {"OUT_PERMUTED", flag(p.output_permutation.has_value())},
      {"PART_N", std::to_string(layout_.n / p.column_parts)},
      {"PROGRAM", render_epilogue(p.epilogue.program, p.out_dtype, "program")},
  };
  for (Activation act : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::sigmoid,
                         Activation::tanh, Activation::gelu_erf}) {
    std::string name = "ACT_" + std::string(activation_name(act));
    std::transform(name.begin(), name.end(), name.begin(), ::toupper);
    values[name] = flag(act == p.epilogue.activation);
  }
  std::string shader_name;
  if (skinny) {
    shader_name = "gemm/gemm_skinny.wgsl";
    values["KS"] = std::to_string(v.ks);
    values["NC"] = std::to_string(v.nc);
    values["NT"] = std::to_string(v.nt);
    values["MV"] = std::to_string(v.mv);
    values["SUBGROUP_REDUCE"] = flag(v.subgroup_reduce);
  } else {
    shader_name = "gemm/gemm_tiled.wgsl";
    const TileShape tile{v.wg_x, v.wg_y, v.tm, v.bk, v.nv};
    values["WG_X"] = std::to_string(v.wg_x);
    values["NV"] = std::to_string(v.nv);
    values["WG_Y"] = std::to_string(v.wg_y);
    values["TM"] = std::to_string(v.tm);
    values["BK"] = std::to_string(v.bk);
    values["KEEP_K_LOOP"] = flag(!v.unroll_k);
    values["TQ"] = std::to_string(v.tm / 4);
    values["FOR_UNROLL"] = flag(v.for_unroll);
    values["STORE_UNROLL"] =
        flag(v.for_unroll || layout_.has_addend || !p.epilogue.program.steps.empty());
    values["DOUBLE_BUFFER"] = flag(v.double_buffer);
    values["COPIES"] = v.double_buffer ? "2" : "1";
    values["GROUP_M"] = std::to_string(v.group_m);
    values["A_LOADS"] = std::to_string(tile.bm() * tile.bk / 4 / tile.threads());
    values["B_LOADS"] = std::to_string(tile.bn() * tile.bk / 4 / tile.threads());
  }
  const wgpu::ComputePipeline& pipeline = shader_pipeline(pipelines, shader_name, values, label);
  pipelines_.push_back({&pipelines, f, &pipeline});
  return pipeline;
}

void record_gemm(const KernelContext& kc, gpu::CommandRecorder& recorder, const GemmProblem& problem,
                 const GemmTensors& tensors, const GemmOptions& options) {
  Gemm(kc, problem, options).record(recorder, tensors);
}

}  // namespace onda::kernels::gemm
