// The GEMM core against a float64 reference: tiled and skinny paths, transposes, odd/prime/1 sizes,
// alpha/beta/addend broadcasts, activations, broadcast batches and 1-D operands, float16 storage,
// prepacked B, and the errors for bad input. Every output is poisoned before the run.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <tuple>

#include "gemm_variants.h"
#include "gpu/command_recorder.h"
#include "gpu/gpu_error.h"
#include "harness.h"
#include "kernels/gemm/gemm.h"
#include "test_gemm_reference.h"

namespace onda::test {
namespace {

using namespace kernels::gemm;

constexpr double kGemmF16Bound = 2e-3;

struct GemmCase {
  Shape a_shape, b_shape;
  bool transpose_a = false, transpose_b = false;
  std::optional<Shape> addend_shape;
  GemmEpilogue epilogue;
  DType a_dtype = DType::f32, b_dtype = DType::f32, out_dtype = DType::f32, addend_dtype = DType::f32;
  bool prepack = false;
  // Positive inputs: no cancellation. For cases with a single output, where rel L2 is one relative
  // error and an unlucky cancellation would measure the conditioning of the data, not the kernel.
  bool positive = false;
  // The epilogue program adds a tensor of the output's shape and dtype (FusedEpilogue::residual).
  bool residual = false;
  // The output stored as parts of its columns (GemmProblem::column_parts).
  int64_t column_parts = 1;
  GemmOptions options;
};

std::string case_name(const GemmCase& c) {
  std::string s = "A" + shape_string(c.a_shape) + (c.transpose_a ? "^T" : "") + " B" +
                  shape_string(c.b_shape) + (c.transpose_b ? "^T" : "") + (c.prepack ? " packed" : "");
  if (c.addend_shape) s += " + D" + shape_string(*c.addend_shape);
  s += " " + std::string(dtype_name(c.a_dtype)) + "/" + std::string(dtype_name(c.b_dtype)) + "->" +
       std::string(dtype_name(c.out_dtype));
  if (c.epilogue.activation != Activation::none)
    s += " " + std::string(activation_name(c.epilogue.activation));
  return s;
}

size_t count(const Shape& s) {
  return static_cast<size_t>(element_count(s));
}

// Runs one case; returns rel L2 against the float64 reference (and prints it).
double run_case(const GemmCase& c, Random& random, std::string* variant = nullptr,
                size_t* dispatches = nullptr) {
  auto& g = gpu();
  auto draw = [&](const Shape& shape, DType dtype) {
    return round_to_dtype(c.positive ? random.uniform(count(shape), 0.1, 1.0) : random.normal(count(shape)),
                          dtype);
  };
  HostMatrixOperand a{draw(c.a_shape, c.a_dtype), c.a_shape, c.transpose_a};
  HostMatrixOperand b{draw(c.b_shape, c.b_dtype), c.b_shape, c.transpose_b};
  std::optional<HostMatrixOperand> d;
  if (c.addend_shape) d = HostMatrixOperand{draw(*c.addend_shape, c.addend_dtype), *c.addend_shape};
  Shape ref_shape;
  std::vector<double> ref = reference_gemm(a, b, d ? &*d : nullptr, c.epilogue, ref_shape);
  std::vector<float> residual;
  if (c.residual) {
    residual = draw(ref_shape, c.out_dtype);
    for (size_t i = 0; i < ref.size(); ++i) ref[i] += residual[i];
  }

  GemmTensors t;
  t.a = upload_floats(a.values, c.a_dtype, a.shape);
  t.b = upload_floats(b.values, c.b_dtype, b.shape);
  if (d) t.addend = upload_floats(d->values, c.addend_dtype, d->shape);
  gpu::CommandRecorder recorder(g.context);
  PackedB packed;
  GemmProblem problem;
  if (c.prepack) {
    packed = prepack_b(g.context, g.pool, g.pipelines, recorder, t.b, c.transpose_b);
    problem = GemmProblem::with_packed_b(c.a_shape, c.a_dtype, c.transpose_a, packed);
    t.packed_b = &packed;
  } else {
    problem.a_shape = c.a_shape;
    problem.a_dtype = c.a_dtype;
    problem.transpose_a = c.transpose_a;
    problem.b_shape = c.b_shape;
    problem.b_dtype = c.b_dtype;
    problem.transpose_b = c.transpose_b;
  }
  problem.addend_shape = c.addend_shape;
  problem.addend_dtype = c.addend_dtype;
  problem.out_dtype = c.out_dtype;
  problem.epilogue = c.epilogue;
  problem.column_parts = c.column_parts;
  if (c.column_parts > 1) {  // the reference in the parts' layout: [part][rows][N / parts]
    const int64_t n = ref_shape.back(), width = n / c.column_parts, rows = static_cast<int64_t>(ref.size()) / n;
    std::vector<double> parts(ref.size());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < n; ++j) parts[(j / width) * rows * width + r * width + j % width] = ref[r * n + j];
    ref = std::move(parts);
  }
  if (c.residual) {
    problem.epilogue.program.residual = true;
    problem.epilogue.program.steps = {
        {kernels::ElementwiseOp::Add, {}, {kernels::FusedOperand::input(0), kernels::FusedOperand::input(1)}}};
    t.residual = upload_floats(residual, c.out_dtype, ref_shape);
  }
  const Gemm plan(kc(), problem, c.options);
  EXPECT_EQ(plan.output_shape(), ref_shape) << case_name(c);
  t.out = poisoned(c.out_dtype, plan.output_shape());
  plan.record(recorder, t);
  if (dispatches) *dispatches = recorder.dispatch_count();
  recorder.submit_and_wait();
  const std::vector<float> out = t.out.download_floats(g.context);
  const double err = rel_l2(out, ref);
  std::printf("  %-70s %-40s rel L2 %.2e\n", case_name(c).c_str(), plan.variant().describe().c_str(), err);
  if (variant) *variant = plan.variant().describe();
  return err;
}

double bound_for(const GemmCase& c) {
  return (c.a_dtype == DType::f16 || c.b_dtype == DType::f16 || c.out_dtype == DType::f16 ||
          (c.addend_shape && c.addend_dtype == DType::f16))
             ? kGemmF16Bound
             : kF32Bound;
}

#define EXPECT_CASE(c, random)                                                                    \
  do {                                                                                            \
    const GemmCase& case_ = (c);                                                                  \
    EXPECT_LE(run_case(case_, random), bound_for(case_)) << case_name(case_) << " seed " << seed; \
  } while (0)

Shape stored(int64_t rows, int64_t cols, bool transpose) {
  return transpose ? Shape{cols, rows} : Shape{rows, cols};
}

TEST(GemmTiled, OddPrimeAndUnitSizesWithTransposes) {
  const uint64_t seed = test_seed();
  Random random(seed);
  const int64_t sizes[] = {1, 3, 17, 64, 129};
  // Ten (M, N, K) triples in which every size appears twice in each role (two Latin squares over
  // the five sizes), each with a random pair of transposes; tiled path forced.
  for (int i = 0; i < 5; ++i) {
    for (int j : {1, 2}) {
      GemmCase c;
      const int64_t m = sizes[i], n = sizes[(i + j) % 5], k = sizes[(i + 2 * j + 1) % 5];
      c.transpose_a = random.integer(0, 1);
      c.transpose_b = random.integer(0, 1);
      c.a_shape = stored(m, k, c.transpose_a);
      c.b_shape = stored(k, n, c.transpose_b);
      c.positive = m * n < 8;  // few outputs: see GemmCase
      c.options.path = GemmPath::tiled;
      EXPECT_CASE(c, random);
    }
  }
}

TEST(GemmTiled, LargerSquareAndRectangularUseEveryTileShape) {
  const uint64_t seed = test_seed();
  Random random(seed);
  int t = 0;
  for (auto [m, n, k] : {std::tuple{300, 260, 200}, {96, 80, 33}, {20, 300, 7}, {257, 131, 64}}) {
    GemmCase c;
    c.transpose_a = t & 1;
    c.transpose_b = t & 2;
    ++t;
    c.a_shape = stored(m, k, c.transpose_a);
    c.b_shape = stored(k, n, c.transpose_b);
    c.options.path = GemmPath::tiled;
    EXPECT_CASE(c, random);
  }
}

// Runs each (M, N, K, prepacked) problem with a K-contiguous B (transposed when not prepacked) on the
// tiled path, rolled (CPU adapters) and unrolled (GPUs), against float64; the chosen tile's
// description must contain `tile`.
void expect_k_contiguous_tile(std::initializer_list<std::tuple<int64_t, int64_t, int64_t, bool>> problems,
                              const std::string& tile) {
  const uint64_t seed = test_seed();
  Random random(seed);
  for (bool unroll : {false, true}) {
    for (auto [m, n, k, prepack] : problems) {
      GemmCase c;
      c.a_shape = {m, k};
      c.b_shape = prepack ? Shape{k, n} : Shape{n, k};
      c.transpose_b = !prepack;
      c.prepack = prepack;
      c.options.path = GemmPath::tiled;
      c.options.unroll_k = unroll;
      std::string variant;
      EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
      EXPECT_NE(variant.find(tile), std::string::npos) << variant;
    }
  }
}

TEST(GemmTiled, KContiguousBLargeTileBothLoopForms) {
  // A K-contiguous B (transposed or prepacked) on a problem of 1024 tiles of 128 x 64 or more takes
  // the K-step-32 tile, whose staging of both K-contiguous operands is XOR-swizzled; check it rolled
  // (CPU adapters) and unrolled (GPUs), with partial tiles in M, N and K, aligned / unaligned rows, and
  // more tile rows than one group of the grouped tile order (8), the last group partial.
  expect_k_contiguous_tile({{33000, 200, 37, true}, {33000, 250, 45, false}}, "128x64 (threads 16x16, 8x4 each) BK=32");
}

TEST(GemmTiled, KContiguousBMidTileBelow1024LargeTiles) {
  // Fewer tiles of 128 x 64 take 64 x 64 tiles of 8 x 4 per thread (K step 16, grouped order).
  expect_k_contiguous_tile({{300, 200, 72, false}, {1100, 140, 37, true}, {257, 140, 45, false}},
                           "64x64 (threads 16x8, 8x4 each) BK=16 group-M 8");
}

TEST(GemmTiled, KContiguousBSquareTileAtLeast256Columns) {
  // From 256 columns and 512 tiles a K-contiguous B takes the 128 x 128 tile (8 x 8 per thread, K
  // step 16, grouped order): partial tiles in M, N and K, transposed and prepacked B, both loop forms,
  // the last group of the grouped order partial. Fewer tiles take a smaller tile.
  expect_k_contiguous_tile({{22000, 300, 45, true}, {16500, 512, 37, false}, {21000, 390, 72, true}},
                           "128x128 (threads 16x16, 8x8 each) BK=16 group-M 8");
  GemmProblem few;  // HTDemucs's FFN down: 21 x 4 tiles of 128 x 128
  few.a_shape = {2688, 2048};
  few.b_shape = {512, 2048};
  few.transpose_b = true;
  EXPECT_NE(Gemm(kc(), few).variant().describe().find("64x64 (threads 16x8"), std::string::npos);
}

TEST(GemmTiled, UnrolledKLoopAsOnGpus) {
  // CPU adapters keep the k loop rolled (compile time); GPUs unroll it. Check the GPU form here too.
  const uint64_t seed = test_seed();
  Random random(seed);
  for (auto [m, n, k] : {std::tuple{300, 200, 37}, {70, 90, 50}, {33, 20, 17}}) {
    GemmCase c;
    c.a_shape = {m, k};
    c.b_shape = {k, n};
    c.options.path = GemmPath::tiled;
    c.options.unroll_k = true;
    std::string variant;
    EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
    EXPECT_EQ(variant.find("k-loop"), std::string::npos) << variant;
  }
}

TEST(GemmEpilogue, AlphaBetaAndEveryAddendBroadcast) {
  const uint64_t seed = test_seed();
  Random random(seed);
  const int64_t m = 37, n = 23, k = 19;
  for (const Shape& d : std::vector<Shape>{{}, {1}, {n}, {1, n}, {m, 1}, {m, n}, {1, 1}}) {
    for (GemmPath path : {GemmPath::tiled, GemmPath::skinny}) {
      GemmCase c;
      c.a_shape = {m, k};
      c.b_shape = {n, k};
      c.transpose_b = true;
      c.addend_shape = d;
      c.epilogue.alpha = 0.75f;
      c.epilogue.beta = -1.5f;
      c.options.path = path;
      EXPECT_CASE(c, random);
    }
  }
}

TEST(GemmEpilogue, EveryActivation) {
  const uint64_t seed = test_seed();
  Random random(seed);
  // Each activation on one path (the activation code is shared by both); the paths alternate.
  GemmPath path = GemmPath::tiled;
  for (Activation act : {Activation::relu, Activation::leaky_relu, Activation::sigmoid, Activation::tanh,
                         Activation::gelu_erf}) {
    {
      path = path == GemmPath::tiled ? GemmPath::skinny : GemmPath::tiled;
      GemmCase c;
      c.a_shape = {path == GemmPath::skinny ? 5 : 70, 31};
      c.b_shape = {45, 31};
      c.transpose_b = true;
      c.addend_shape = Shape{45};
      c.epilogue.alpha = 2.0f;  // pushes values into the saturating ranges of sigmoid and tanh
      c.epilogue.activation = act;
      c.epilogue.activation_alpha = 0.2f;
      c.options.path = path;
      EXPECT_CASE(c, random);
    }
  }
}

// A residual connection fused into the store (graph/fuse_residual_add.h): read at each stored
// element on the tiled path (float32, vec4 stores, float16 pairs and atomics), the skinny paths
// (swapped: the store is transposed), batched, after a bias and an activation, and in row blocks.
TEST(GemmEpilogue, ResidualAddedAtTheStore) {
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shapes {
    Shape a, b;
    DType dtype;
    GemmPath path;
    bool transpose_b = false;
    bool vec_store = false;
    uint64_t max_binding_bytes = 0;
  };
  const std::vector<Shapes> cases = {
      {{67, 40}, {40, 52}, DType::f32, GemmPath::automatic},
      {{64, 32}, {32, 64}, DType::f32, GemmPath::tiled, false, true},
      {{2, 33, 20}, {20, 18}, DType::f16, GemmPath::automatic},  // even N: float16 pairs
      {{31, 20}, {20, 9}, DType::f16, GemmPath::tiled},          // odd N: float16 atomics
      {{6, 48}, {40, 48}, DType::f32, GemmPath::skinny, true},
      {{90, 24}, {24, 3}, DType::f32, GemmPath::skinny_transposed},
      {{300, 16}, {16, 24}, DType::f32, GemmPath::automatic, false, false, 8 << 10},  // row blocks
  };
  for (const auto& s : cases) {
    GemmCase c;
    c.a_shape = s.a;
    c.b_shape = s.b;
    c.transpose_b = s.transpose_b;
    c.a_dtype = c.b_dtype = c.out_dtype = c.addend_dtype = s.dtype;
    c.addend_shape = Shape{s.transpose_b ? s.b.front() : s.b.back()};
    c.epilogue.activation = Activation::relu;
    c.residual = true;
    c.options.path = s.path;
    c.options.tuning.vec_store = s.vec_store;
    c.options.max_binding_bytes = s.max_binding_bytes;
    EXPECT_CASE(c, random);
  }
}

// The output stored as consecutive parts of its columns (graph/split_gemm_columns.h: attention's
// packed Q, K and V): float32 with scalar and vec4 stores, float16 pairs, batched, with a bias and an
// activation, on every tile the automatic choice and the tuning give; a skinny-sized problem takes
// the tiled path.
TEST(GemmEpilogue, OutputInColumnParts) {
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shapes {
    Shape a, b;
    int64_t parts;
    DType dtype;
    bool vec_store = false;
    bool prepack = false;
  };
  const std::vector<Shapes> cases = {
      {{67, 40}, {40, 48}, 3, DType::f32},
      {{300, 32}, {32, 192}, 3, DType::f32, true, true},
      {{2, 33, 20}, {20, 16}, 2, DType::f16},
      {{3, 70, 24}, {24, 24}, 2, DType::f32, false, true},
      {{5, 16}, {16, 24}, 3, DType::f32},  // 5 rows: skinny-sized
      {{2, 37, 20}, {2, 20, 24}, 3, DType::f32},  // two batch entries in each part
  };
  for (const auto& s : cases) {
    GemmCase c;
    c.a_shape = s.a;
    c.b_shape = s.b;
    c.prepack = s.prepack;
    c.a_dtype = c.b_dtype = c.out_dtype = c.addend_dtype = s.dtype;
    c.addend_shape = Shape{s.b.back()};
    c.epilogue.activation = Activation::tanh;
    c.column_parts = s.parts;
    c.options.tuning.vec_store = s.vec_store;
    EXPECT_CASE(c, random);
  }
  GemmProblem odd;  // parts must be multiples of 4 columns
  odd.a_shape = {8, 8};
  odd.b_shape = {8, 18};
  odd.column_parts = 3;
  EXPECT_THROW(Gemm(kc(), odd), std::invalid_argument);
}

TEST(GemmBatched, NumpyBroadcastOfBatchDimensions) {
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shapes {
    Shape a, b;
    std::optional<Shape> d;
  };
  const std::vector<Shapes> cases = {
      {{2, 1, 17, 9}, {3, 9, 13}, std::nullopt},            // [2,1] x [3] -> [2,3]
      {{4, 17, 9}, {9, 13}, Shape{13}},                     // B shared by every batch
      {{9, 13}, {5, 13, 3}, Shape{5, 1, 3}},                // A shared, per-batch per-column addend
      {{2, 3, 1, 5, 8, 4}, {3, 2, 1, 4, 6}, std::nullopt},  // batch [2,3,3,2,5] collapses to 4 dims
      {{9}, {3, 9, 11}, std::nullopt},                      // 1-D A: output [3, 11]
      {{3, 7, 9}, {9}, Shape{7}},                           // 1-D B: output [3, 7]
      {{9}, {9}, Shape{}},                                  // dot product: output []
      {{6, 1, 64, 3}, {1, 5, 3, 64}, Shape{6, 5, 64, 64}},
  };
  for (const auto& s : cases) {
    for (GemmPath path : {GemmPath::tiled, GemmPath::skinny}) {
      // The skinny path needs a K-contiguous B: the same product with B stored transposed.
      GemmCase c;
      c.a_shape = s.a;
      c.b_shape = s.b;
      if (path == GemmPath::skinny) {
        if (s.b.size() < 2) continue;
        std::swap(c.b_shape[c.b_shape.size() - 1], c.b_shape[c.b_shape.size() - 2]);
        c.transpose_b = true;
      }
      c.addend_shape = s.d;
      c.positive = s.a.size() == 1 && s.b.size() == 1;  // a single output: see GemmCase
      c.options.path = path;
      EXPECT_CASE(c, random);
    }
  }
}

TEST(GemmBatched, MoreBatchesThanOneDispatchAllows) {
  const uint64_t seed = test_seed();
  Random random(seed);
  GemmCase c;
  const int64_t batches = gpu().context.limits().maxComputeWorkgroupsPerDimension + 5;
  c.a_shape = {batches, 1, 2};
  c.b_shape = {batches, 2, 3};
  c.options.path = GemmPath::tiled;
  EXPECT_CASE(c, random);
}

TEST(GemmHalf, Float16StorageEverywhere) {
  const uint64_t seed = test_seed();
  Random random(seed);
  const DType h = DType::f16, f = DType::f32;
  struct Types {
    DType a, b, out, d;
  };
  for (const Types& ty : {Types{h, h, h, h}, Types{h, h, f, f}, Types{f, h, h, f}, Types{h, f, f, h}}) {
    // An aligned shape (vector loads) and an odd one (scalar loads, odd N: atomic f16 stores).
    for (auto [m, n, k] : {std::tuple{33, 40, 24}, {65, 17, 129}}) {
      {
        const int t = static_cast<int>(random.integer(0, 3));
        GemmCase c;
        c.a_dtype = ty.a;
        c.b_dtype = ty.b;
        c.out_dtype = ty.out;
        c.addend_dtype = ty.d;
        c.transpose_a = t & 1;
        c.transpose_b = t & 2;
        c.a_shape = stored(m, k, c.transpose_a);
        c.b_shape = stored(k, n, c.transpose_b);
        c.addend_shape = Shape{n};
        EXPECT_CASE(c, random);
      }
    }
  }
}

TEST(GemmSkinny, RecurrentShapesBothReductions) {
  const uint64_t seed = test_seed();
  Random random(seed);
  for (bool subgroups : {true, false}) {
    for (auto [m, n, k] : {std::tuple{1, 2048, 512},
                           {4, 512, 128},
                           {5, 257, 63},
                           {17, 96, 130},
                           {64, 64, 64},
                           {33, 7, 1},
                           {2, 1, 3}}) {
      GemmCase c;
      c.a_shape = {m, k};
      c.b_shape = {n, k};
      c.transpose_b = true;
      c.positive = m * n < 8;  // few outputs: see GemmCase
      c.options.path = GemmPath::skinny;
      c.options.allow_subgroups = subgroups;
      EXPECT_CASE(c, random);
    }
  }
  // Transposed A and float16 through the skinny path.
  GemmCase c;
  c.a_shape = {40, 6};
  c.transpose_a = true;
  c.b_shape = {100, 40};
  c.transpose_b = true;
  c.options.path = GemmPath::skinny;
  EXPECT_CASE(c, random);
  c.a_dtype = c.b_dtype = c.out_dtype = DType::f16;
  EXPECT_CASE(c, random);
}

TEST(GemmSkinny, RowAndColumnBlockingPastSixteenRows) {
  // M > 16 on GPUs: 16-row blocks with NT = 4 / 2 / 1 columns per thread group (off by default on
  // CPU adapters, forced here). Partial row blocks, partial column groups, K not a multiple of the
  // K split, aligned and unaligned rows, both reductions for the widest blocking.
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Blocked {
    int64_t m, n, k;
    bool subgroups;
    const char* expect;
  };
  // 5..64 rows with 256+ columns take the short-K-split blocks the H200 sweep preferred (KS 16 / 8,
  // 2 columns per thread group); more rows (only when the skinny path is forced) the 16-row blocks.
  for (const Blocked& s :
       {Blocked{80, 1100, 72, true, "x4 rows=16"}, Blocked{80, 1100, 72, false, "x4 rows=16"},
        Blocked{40, 1100, 72, true, "KS=8 NC=32x2 rows=8"},
        Blocked{24, 300, 35, true, "KS=16 NC=16x2 rows=8"},
        Blocked{12, 500, 33, false, "KS=16 NC=16x2 rows=4"}, Blocked{64, 64, 64, false, "x1 rows=16"}}) {
    GemmCase c;
    c.a_shape = {s.m, s.k};
    c.b_shape = {s.n, s.k};
    c.transpose_b = true;
    c.options.path = GemmPath::skinny;
    c.options.allow_subgroups = s.subgroups;
    c.options.skinny_blocking = true;
    std::string variant;
    EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
    EXPECT_NE(variant.find(s.expect), std::string::npos) << variant;
  }
}

TEST(GemmSkinny, FewColumnsSwapOperands) {
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shapes {
    Shape a, b;
    bool transpose_b;
    std::optional<Shape> d;
    DType dtype;
  };
  // A vector or a K-contiguous B swaps automatically; a row-major B with several columns is read
  // transposed (strided) when swapped, so the automatic plan tiles it: force the swap there.
  const std::vector<Shapes> cases = {
      {{300, 64}, {64}, false, Shape{300}, DType::f32},            // matrix-vector, output [300]
      {{129, 17}, {3, 17}, true, Shape{129, 1}, DType::f32},       // per-row addend
      {{2, 100, 12}, {12, 3}, false, Shape{2, 1, 3}, DType::f32},  // batched, broadcast B
      {{97, 40}, {40, 5}, false, Shape{97, 5}, DType::f16},        // odd N, float16 output
  };
  for (const auto& s : cases) {
    GemmCase c;
    c.a_shape = s.a;
    c.b_shape = s.b;
    c.transpose_b = s.transpose_b;
    c.addend_shape = s.d;
    c.a_dtype = c.b_dtype = c.out_dtype = c.addend_dtype = s.dtype;
    c.epilogue.beta = 0.5f;
    const bool automatic = s.transpose_b || s.b.size() == 1;
    if (!automatic) c.options.path = GemmPath::skinny_transposed;
    std::string variant;
    const double err = run_case(c, random, &variant);
    EXPECT_LE(err, bound_for(c)) << case_name(c) << " seed " << seed;
    EXPECT_NE(variant.find("B^T A^T"), std::string::npos) << "path did not swap: " << variant;
  }
  // A prepacked B as the shader's A (its rows are K_pad long, K of them real).
  GemmCase c;
  c.a_shape = {150, 21};
  c.b_shape = {21, 6};
  c.prepack = true;
  c.options.path = GemmPath::skinny_transposed;
  EXPECT_CASE(c, random);
}

TEST(GemmSkinny, ChosenAutomaticallyForFewRows) {
  GemmProblem p;
  p.a_shape = {8, 512};
  p.b_shape = {2048, 512};
  p.transpose_b = true;
  EXPECT_EQ(Gemm(kc(), p).variant().path, GemmPath::skinny);
  p.a_shape = {300, 512};
  EXPECT_EQ(Gemm(kc(), p).variant().path, GemmPath::tiled);
}

TEST(GemmTiled, AttentionValueProductsTakeNarrowTiles) {
  // softmax(QK^T) V: few columns of a row-major B (the head size), many batches. Planned tiled with a
  // tile as narrow as N (the swapped skinny path would read B transposed); odd M = K as in MP-SENet
  // (321 frames / 100 frequency rows), N = 16 and an N = 24 that leaves part of the 32-wide tile empty.
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shapes {
    Shape a, b;
    const char* expect;
  };
  for (const Shapes& s :
       {Shapes{{6, 101, 101}, {6, 101, 16}, "64x32"}, Shapes{{3, 77, 67}, {3, 67, 24}, "64x32"},
        Shapes{{2, 2, 70, 33}, {2, 1, 33, 5}, "64x32"}}) {
    GemmCase c;
    c.a_shape = s.a;
    c.b_shape = s.b;
    std::string variant;
    EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
    EXPECT_NE(variant.find(std::string("tiled ") + s.expect), std::string::npos) << variant;
  }
  // The same products with the GPU's unrolled k loop and a K step of 32.
  GemmCase c;
  c.a_shape = {5, 100, 100};
  c.b_shape = {5, 100, 16};
  GemmVariant v;
  v.path = GemmPath::tiled;
  v.wg_x = 4;
  v.wg_y = 16;
  v.tm = 4;
  v.bk = 32;
  c.options.variant = v;
  EXPECT_CASE(c, random);
}

TEST(GemmVariants, ForcedConfigurationsRunOrAreRefused) {
  // GemmOptions::variant (the benchmark's sweep): valid configurations run exactly as given, ones the
  // shader cannot run on this operand layout are refused at planning.
  const uint64_t seed = test_seed();
  Random random(seed);
  const auto tiled = [](uint32_t wg_x, uint32_t wg_y, uint32_t tm, uint32_t bk, uint32_t group_m,
                        uint32_t nv = 1) { return tiled_variant(wg_x, wg_y, tm, bk, group_m, nv, false); };
  for (bool tb : {false, true}) {
    // NV = 2: two vec4s of B per thread (128 x 128 tiles; N = 170 leaves a partial second vec4 group).
    for (const GemmVariant& v :
         {tiled(16, 16, 8, 16, 0), tiled(16, 16, 8, 32, 8), tiled(16, 16, 4, 16, 4), tiled(8, 16, 4, 16, 0),
          tiled(16, 16, 8, 16, 0, 2), tiled(16, 16, 8, 32, 8, 2)}) {
      GemmCase c;
      c.a_shape = {150, 70};
      const int64_t n = v.nv == 2 ? 170 : 90;
      c.b_shape = tb ? Shape{n, 70} : Shape{70, n};
      c.transpose_b = tb;
      c.options.variant = v;
      std::string variant;
      EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
      EXPECT_EQ(variant, v.describe());
    }
  }
  GemmVariant skinny;
  skinny.path = GemmPath::skinny;
  skinny.ks = 16;
  skinny.nc = 8;
  skinny.nt = 2;
  skinny.mv = 4;
  GemmCase c;
  c.a_shape = {40, 70};
  c.b_shape = {90, 70};
  c.transpose_b = true;
  c.options.variant = skinny;
  EXPECT_CASE(c, random);

  GemmProblem p;
  p.a_shape = {150, 70};
  p.b_shape = {90, 70};
  p.transpose_b = true;
  GemmOptions narrow;
  narrow.variant = tiled(4, 16, 4, 16, 0);  // 16 columns: too narrow to swizzle a K-contiguous B
  EXPECT_THROW(Gemm(kc(), p, narrow), std::invalid_argument);
  p.b_shape = {70, 90};
  p.transpose_b = false;
  GemmOptions row_major_skinny;
  row_major_skinny.variant = skinny;  // the skinny shader's B must be K-contiguous
  EXPECT_THROW(Gemm(kc(), p, row_major_skinny), std::invalid_argument);
}

TEST(GemmVariants, ForUnrolledRegisterBlock) {
  // GemmVariant::for_unroll (GemmTuning::for_unroll): the register block and the epilogue written out by
  // the template's #for. Both operand layouts, TM 4 / 8, NV 1 / 2, the rolled and unrolled k loop,
  // partial tiles in M, N and K, float16 output (stored in pairs), an addend and an activation.
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Shape3 {
    uint32_t wg_x, wg_y, tm, bk, group_m, nv;
    bool unroll_k;
  };
  int i = 0;
  for (const Shape3& t : {Shape3{16, 16, 8, 16, 0, 1, false}, Shape3{16, 16, 8, 32, 8, 2, false},
                          Shape3{8, 16, 4, 16, 0, 1, true}, Shape3{8, 8, 4, 8, 0, 2, false}}) {
    for (bool tb : {false, true}) {
      GemmVariant v = tiled_variant(t.wg_x, t.wg_y, t.tm, t.bk, t.group_m, t.nv, t.unroll_k);
      v.for_unroll = true;
      GemmCase c;
      c.a_shape = {150, 70};
      const int64_t n = 4 * t.nv * t.wg_x + 42;  // a second, partial tile of columns
      c.b_shape = tb ? Shape{n, 70} : Shape{70, n};
      c.transpose_b = tb;
      c.options.variant = v;
      if (i % 3 == 1) c.out_dtype = DType::f16;
      if (i % 3 == 2) {
        c.addend_shape = Shape{n};
        c.epilogue.activation = Activation::tanh;
      }
      std::string variant;
      EXPECT_LE(run_case(c, random, &variant), bound_for(c)) << case_name(c) << " seed " << seed;
      EXPECT_NE(variant.find("#for"), std::string::npos) << variant;
      ++i;
    }
  }
}

TEST(GemmVariants, DoubleBufferedStagingAndVec4Stores) {
  // GemmVariant::double_buffer (two staged copies, the next K step prefetched into registers) and
  // vec_store (vec4 output stores): tiles of 128 x 128 (8 x 8 per thread, BK 8; 8 x 16 and 16 x 8 per
  // thread, 128 threads), 128 x 64 (8 x 8 per thread, 128 threads; 8 x 4; 16 x 4), 64 x 64 (BK 32) and
  // 32 x 32; row-major, transposed and
  // prepacked B, a transposed A; ragged M, N and K (K below one K step, K not a multiple of 4: scalar
  // loads, K a multiple of 4: vec4 loads); the #for register block and the unrolled k loop; f16 output,
  // an addend with an activation, N not a multiple of 4 (vec4 stores fall back to scalar ones).
  const uint64_t seed = test_seed();
  Random random(seed);
  struct Case {
    uint32_t wg_x, wg_y, tm, bk, group_m, nv;
    bool for_unroll, unroll_k, vec_store;
    int64_t m, n, k;
    bool transpose_a, transpose_b, prepack;
    int extra;  // 0 none, 1 float16 output, 2 addend [N] + tanh
  };
  const Case cases[] = {
      {16, 16, 8, 8, 8, 2, false, false, true, 300, 170, 70, false, false, false, 0},
      {16, 16, 8, 8, 0, 2, true, false, true, 150, 172, 64, false, true, false, 2},
      {8, 16, 8, 16, 0, 2, false, false, true, 150, 100, 37, true, false, false, 0},
      {8, 16, 8, 16, 4, 2, true, false, false, 260, 106, 3, false, true, false, 1},
      {16, 16, 8, 16, 0, 1, false, false, true, 150, 106, 45, false, false, true, 0},
      {16, 16, 4, 32, 2, 1, false, false, true, 140, 96, 100, false, true, false, 2},
      {8, 8, 4, 8, 0, 1, false, true, true, 70, 44, 50, false, false, false, 0},
      {8, 8, 4, 8, 0, 1, true, true, false, 33, 20, 17, false, false, true, 0},
      {16, 8, 16, 16, 8, 1, true, false, true, 200, 68, 40, false, true, false, 0},
      {8, 16, 8, 8, 0, 4, true, false, true, 140, 200, 21, false, true, false, 0},
      {16, 8, 16, 8, 4, 2, false, false, true, 260, 136, 30, false, false, true, 0},
  };
  for (const Case& t : cases) {
    GemmVariant v = tiled_variant(t.wg_x, t.wg_y, t.tm, t.bk, t.group_m, t.nv, t.unroll_k);
    v.for_unroll = t.for_unroll;
    v.double_buffer = true;
    v.vec_store = t.vec_store;
    GemmCase c;
    c.transpose_a = t.transpose_a;
    c.a_shape = stored(t.m, t.k, t.transpose_a);
    c.b_shape = t.prepack ? Shape{t.k, t.n} : stored(t.k, t.n, t.transpose_b);
    c.transpose_b = t.transpose_b;
    c.prepack = t.prepack;
    c.options.variant = v;
    if (t.extra == 1) c.out_dtype = DType::f16;
    if (t.extra == 2) {
      c.addend_shape = Shape{t.n};
      c.epilogue.activation = Activation::tanh;
    }
    std::string variant;
    EXPECT_LE(run_case(c, random, &variant), bound_for(c)) << case_name(c) << " seed " << seed;
    EXPECT_EQ(variant, v.describe());
  }
  // K = 0: the double-buffered prologue loads nothing; the output is the epilogue of zero.
  GemmCase c;
  c.a_shape = {6, 0};
  c.b_shape = {0, 8};
  c.addend_shape = Shape{6, 8};
  c.epilogue.beta = 0.5f;
  GemmVariant v = tiled_variant(8, 8, 4, 8, 0, 1, false);
  v.double_buffer = true;
  v.vec_store = true;
  c.options.variant = v;
  EXPECT_CASE(c, random);
}

TEST(GemmVariants, TuningSetsTileBufferingAndStores) {
  // GemmTuning::tile replaces the automatic tile where the problem fills it and the layout and device
  // admit it; double_buffer applies where twice the workgroup memory fits; the others keep the rule;
  // unroll_k sets the k loop's form.
  const uint64_t seed = test_seed();
  Random random(seed);
  const auto& limits = gpu().context.limits();
  struct Case {
    GemmTile tile;
    int64_t m, n;
    bool transpose_b;
    const char* expect;  // in the variant's description, or nullptr: the automatic tile
    bool two_copies;     // whether the double-buffered copies fit this device
  };
  const uint64_t wide_bk32 = 32 * (128 + 128) * 4;  // 128 x 128, BK 32: bytes of one copy
  const Case cases[] = {
      {{16, 16, 8, 16, 2, 8},
       300,
       260,
       false,
       "tiled 128x128 (threads 16x16, 8x8 each) BK=16 group-M 8",
       true},
      {{16, 16, 8, 32, 2, 0},
       260,
       256,
       true,
       "tiled 128x128 (threads 16x16, 8x8 each) BK=32",
       2 * wide_bk32 <= limits.maxComputeWorkgroupStorageSize},
      {{16, 16, 8, 16, 2, 8}, 100, 260, false, nullptr, true},  // fewer rows than one tile
      {{4, 16, 4, 16, 1, 0}, 150, 90, true, nullptr, true},     // 16 columns: no swizzle of a K-contiguous B
  };
  for (const Case& t : cases) {
    GemmCase c;
    c.a_shape = {t.m, 70};
    c.b_shape = stored(70, t.n, t.transpose_b);
    c.transpose_b = t.transpose_b;
    c.options.path = GemmPath::tiled;
    c.options.unroll_k = false;
    c.options.tuning.tile = t.tile;
    c.options.tuning.double_buffer = true;
    c.options.tuning.vec_store = true;
    std::string variant;
    EXPECT_LE(run_case(c, random, &variant), kF32Bound) << case_name(c) << " seed " << seed;
    if (t.expect) {
      EXPECT_EQ(variant.rfind(t.expect, 0), 0u) << variant;
    } else {
      EXPECT_EQ(variant.find(fmt::format("{}x{} each", t.tile.tm, 4 * t.tile.nv)) == std::string::npos ||
                    variant.find(fmt::format("threads {}x{}", t.tile.wg_x, t.tile.wg_y)) == std::string::npos,
                true)
          << variant;
    }
    EXPECT_EQ(variant.find("2-buf") != std::string::npos, t.two_copies) << variant;
    EXPECT_NE(variant.find("vec4-store"), std::string::npos) << variant;
  }
  // GemmTuning::unroll_k decides the k loop where GemmOptions::unroll_k does not (planning only).
  GemmProblem p;
  p.a_shape = {300, 70};
  p.b_shape = {70, 260};
  for (bool unroll : {false, true}) {
    GemmOptions options;
    options.tuning.unroll_k = unroll;
    const std::string d = Gemm(kc(), p, options).variant().describe();
    EXPECT_EQ(d.find("k-loop") == std::string::npos, unroll) << d;
  }
}

TEST(GemmPacked, PrepackedWeightsOnBothPaths) {
  const uint64_t seed = test_seed();
  Random random(seed);
  for (DType dt : {DType::f32, DType::f16}) {
    for (bool transpose_b : {false, true}) {
      for (auto [m, n, k] : {std::tuple{1, 300, 129}, {129, 33, 17}}) {
        GemmCase c;
        c.a_dtype = c.b_dtype = dt;
        c.transpose_b = transpose_b;
        c.a_shape = {m, k};
        c.b_shape = stored(k, n, transpose_b);
        c.prepack = true;
        c.addend_shape = Shape{n};
        c.epilogue.activation = Activation::tanh;
        EXPECT_CASE(c, random);
      }
    }
  }
}

TEST(GemmPacked, PaddedRowsForPowerOfTwoK) {
  // K = 256 packs into rows of 288 (packed_row_length: no 1 KiB-multiple row strides); both paths
  // must read the longer rows (and their zero padding) correctly, and the GEMM rejects packed data
  // whose shape does not match its k / n.
  EXPECT_EQ(packed_row_length(256), 288);
  EXPECT_EQ(packed_row_length(4096), 4128);
  EXPECT_EQ(packed_row_length(129), 132);
  EXPECT_EQ(packed_row_length(384), 384);
  const uint64_t seed = test_seed();
  Random random(seed);
  for (DType dt : {DType::f32, DType::f16}) {
    for (auto [m, n, k] : {std::tuple{3, 70, 256}, {260, 130, 256}}) {
      GemmCase c;
      c.a_dtype = c.b_dtype = dt;
      c.a_shape = {m, k};
      c.b_shape = {k, n};
      c.prepack = true;
      EXPECT_CASE(c, random);
    }
  }
  auto& g = gpu();
  gpu::CommandRecorder recorder(g.context);
  const Tensor b = upload_floats(random.normal(256 * 8), DType::f32, {256, 8});
  PackedB packed = prepack_b(g.context, g.pool, g.pipelines, recorder, b, false);
  EXPECT_EQ(packed.data.shape(), (Shape{8, 288}));
  const GemmProblem problem = GemmProblem::with_packed_b({2, 256}, DType::f32, false, packed);
  const Gemm plan(kc(), problem);
  GemmTensors t;
  t.a = upload_floats(random.normal(2 * 256), DType::f32, {2, 256});
  t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
  PackedB unpadded{Tensor::empty(g.pool, DType::f32, {8, 256}), 256, 8};
  t.packed_b = &unpadded;
  EXPECT_THROW(plan.record(recorder, t), std::invalid_argument);
}

TEST(GemmViews, OperandsAtUnalignedOffsets) {
  const uint64_t seed = test_seed();
  Random random(seed);
  auto& g = gpu();
  const int64_t m = 9, k = 12, n = 16;
  std::vector<float> a_all = random.normal((m + 1) * k);
  std::vector<float> b_host = random.normal(k * n);
  Tensor a_full = upload_floats(a_all, DType::f32, {m + 1, k});
  // A is elements 3 .. 3 + m*k of a larger tensor: not 4-aligned, so the scalar loads are used.
  Tensor flat = a_full.reshape({(m + 1) * k});
  Tensor view = flat.slice_outer(3, 3 + m * k).reshape({m, k});
  HostMatrixOperand ha{std::vector<float>(a_all.begin() + 3, a_all.begin() + 3 + m * k), {m, k}};
  HostMatrixOperand hb{b_host, {k, n}};
  Shape shape;
  const auto ref = reference_gemm(ha, hb, nullptr, {}, shape);
  GemmProblem p;
  p.a_shape = {m, k};
  p.b_shape = {k, n};
  const Gemm plan(kc(), p);
  GemmTensors t;
  t.a = view;
  t.b = upload_floats(b_host, DType::f32, {k, n});
  t.out = poisoned(DType::f32, plan.output_shape());
  gpu::CommandRecorder recorder(g.context);
  plan.record(recorder, t);
  recorder.submit_and_wait();
  const double err = rel_l2(t.out.download_floats(g.context), ref);
  std::printf("  A view at element offset 3: rel L2 %.2e\n", err);
  EXPECT_LE(err, kF32Bound) << "seed " << seed;
}

TEST(GemmEdges, EmptyInnerDimensionGivesTheEpilogueOfZero) {
  const uint64_t seed = test_seed();
  Random random(seed);
  for (GemmPath path : {GemmPath::tiled, GemmPath::skinny}) {
    GemmCase c;
    c.a_shape = {6, 0};
    c.b_shape = {5, 0};
    c.transpose_b = true;
    c.addend_shape = Shape{6, 5};
    c.epilogue.beta = 0.5f;
    c.epilogue.activation = Activation::relu;
    c.options.path = path;
    EXPECT_CASE(c, random);
  }
  // An empty output records nothing and does not fail.
  auto& g = gpu();
  GemmProblem p;
  p.a_shape = {0, 4};
  p.b_shape = {4, 3};
  const Gemm plan(kc(), p);
  GemmTensors t;
  t.a = Tensor::empty(g.pool, DType::f32, {0, 4});
  t.b = Tensor::empty(g.pool, DType::f32, {4, 3});
  t.out = Tensor::empty(g.pool, DType::f32, {0, 3});
  gpu::CommandRecorder recorder(g.context);
  plan.record(recorder, t);
  EXPECT_EQ(recorder.dispatch_count(), 0u);
}

TEST(GemmLimits, OversizeOperandsAreSplitIntoRowBlocks) {
  const uint64_t seed = test_seed();
  Random random(seed);
  // A binding limit of 4 KiB (instead of the device's) forces blocks of rows.
  for (DType dt : {DType::f32, DType::f16}) {
    for (const Shape& d : std::vector<Shape>{{301, 1}, {13}, {301, 13}}) {
      GemmCase c;
      c.a_shape = {301, 20};
      c.b_shape = {20, 13};
      c.addend_shape = d;
      c.a_dtype = c.b_dtype = c.out_dtype = c.addend_dtype = dt;
      c.options.max_binding_bytes = 4096;
      if (d.size() == 1) c.options.path = GemmPath::tiled;
      size_t dispatches = 0;
      EXPECT_LE(run_case(c, random, nullptr, &dispatches), bound_for(c)) << case_name(c) << " seed " << seed;
      // Rows of 80 (f32) or 40 (f16) bytes in 4 KiB: blocks of 50 or 100 rows.
      EXPECT_EQ(dispatches, dt == DType::f32 ? 7u : 4u) << "row blocks";
    }
  }
  // What cannot be split is refused with the limit named.
  auto& g = gpu();
  GemmProblem p;
  p.a_shape = {20, 301};
  p.transpose_a = true;
  p.b_shape = {20, 13};
  GemmOptions options;
  options.max_binding_bytes = 4096;
  const Gemm plan(kc(), p, options);
  GemmTensors t;
  t.a = Tensor::empty(g.pool, DType::f32, p.a_shape);
  t.b = Tensor::empty(g.pool, DType::f32, p.b_shape);
  t.out = Tensor::empty(g.pool, DType::f32, plan.output_shape());
  gpu::CommandRecorder recorder(g.context);
  EXPECT_THROW(plan.record(recorder, t), gpu::DeviceLimitError);
}

TEST(GemmLayout, CollapsesBatchDimensions) {
  using Strides = std::vector<int64_t>;
  // Both operands batched alike: one dimension.
  MatmulLayout l = plan_matmul_layout({2, 3, 4, 5}, false, {2, 3, 5, 6}, false, std::nullopt);
  EXPECT_EQ(l.batch_shape, Strides({6}));
  EXPECT_EQ(l.a_batch_strides, Strides({20}));
  EXPECT_EQ(l.b_batch_strides, Strides({30}));
  EXPECT_EQ(l.output_shape, Shape({2, 3, 4, 6}));
  // B shared by a contiguous A's batch: the batch folds into M (one [24, 5] x [5, 6] product).
  l = plan_matmul_layout({2, 3, 4, 5}, false, {5, 6}, false, Shape{6});
  EXPECT_EQ(l.batch_shape, Strides({}));
  EXPECT_EQ(l.batch_count, 1);
  EXPECT_EQ(l.m, 24);
  EXPECT_EQ(l.output_shape, Shape({2, 3, 4, 6}));
  EXPECT_EQ(l.addend_row_stride, 0);
  EXPECT_EQ(l.addend_col_stride, 1);
  // ... but not a transposed A (its matrices' rows are not consecutive rows of one matrix), nor
  // an addend that differs per batch entry but not per row.
  l = plan_matmul_layout({2, 3, 5, 4}, true, {5, 6}, false, std::nullopt);
  EXPECT_EQ(l.batch_shape, Strides({6}));
  EXPECT_EQ(l.b_batch_strides, Strides({0}));
  EXPECT_EQ(l.m, 4);
  l = plan_matmul_layout({6, 4, 5}, false, {5, 6}, false, Shape{6, 1, 6});
  EXPECT_EQ(l.batch_shape, Strides({6}));
  EXPECT_EQ(l.addend_batch_strides, Strides({6}));
  // An outer product of batches stays two dimensions.
  l = plan_matmul_layout({2, 1, 4, 5}, false, {3, 6, 5}, true, Shape{4, 1});
  EXPECT_EQ(l.batch_shape, Strides({2, 3}));
  EXPECT_EQ(l.a_batch_strides, Strides({20, 0}));
  EXPECT_EQ(l.b_batch_strides, Strides({0, 30}));
  EXPECT_EQ(l.n, 6);
  EXPECT_EQ(l.k, 5);
  EXPECT_EQ(l.addend_row_stride, 1);
  EXPECT_EQ(l.addend_col_stride, 0);
  // 1-D operands: the promoted dimension leaves the output.
  l = plan_matmul_layout({5}, false, {7, 5, 3}, false, std::nullopt);
  EXPECT_EQ(l.output_shape, Shape({7, 3}));
  EXPECT_EQ(l.m, 1);
  l = plan_matmul_layout({5}, false, {5}, false, std::nullopt);
  EXPECT_EQ(l.output_shape, Shape({}));
}

TEST(GemmErrors, BadInputIsNamed) {
  auto& g = gpu();
  auto expect_message = [&](const GemmProblem& p, const char* needle) {
    try {
      Gemm plan(kc(), p);
      ADD_FAILURE() << "no error for a bad problem (" << needle << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  GemmProblem p;
  p.a_shape = {4, 5};
  p.b_shape = {6, 7};
  expect_message(p, "inner dimensions");
  p.b_shape = {5, 7};
  p.a_shape = {2, 4, 5};
  p.b_shape = {3, 5, 7};
  expect_message(p, "do not broadcast");
  p.b_shape = {5, 7};
  p.addend_shape = Shape{4, 3};
  expect_message(p, "addend");
  p.addend_shape.reset();
  p.a_dtype = DType::i32;
  expect_message(p, "float32 or float16");
  p.a_dtype = DType::f32;
  p.a_shape = {};
  expect_message(p, "rank >= 1");
  // Nine batch dimensions that alternate which operand broadcasts cannot collapse to four.
  p.a_shape = {2, 1, 2, 1, 2, 1, 2, 1, 2, 4, 5};
  p.b_shape = {1, 2, 1, 2, 1, 2, 1, 2, 1, 5, 7};
  expect_message(p, "at most 4");
  p.b_shape = {5, 7};

  // Tensors that do not match the plan.
  p.a_shape = {4, 5};
  const Gemm plan(kc(), p);
  GemmTensors t;
  t.a = Tensor::empty(g.pool, DType::f32, {4, 5});
  t.b = Tensor::empty(g.pool, DType::f32, {5, 7});
  t.out = Tensor::empty(g.pool, DType::f32, {4, 8});
  gpu::CommandRecorder recorder(g.context);
  EXPECT_THROW(plan.record(recorder, t), std::invalid_argument);
  // In place: the output aliases an input.
  Tensor shared = Tensor::empty(g.pool, DType::f32, {2, 4, 7});
  t.out = shared.slice_outer(0, 1).reshape({4, 7});
  t.a = shared.reshape({56}).slice_outer(28, 48).reshape({4, 5});
  EXPECT_THROW(plan.record(recorder, t), std::invalid_argument);
  Tensor three_d = Tensor::empty(g.pool, DType::f32, {2, 5, 7});
  EXPECT_THROW(prepack_b(g.context, g.pool, g.pipelines, recorder, three_d, false), std::invalid_argument);
}

}  // namespace
}  // namespace onda::test
