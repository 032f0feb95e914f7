// Conv and ConvTranspose against the float64 reference (test_conv_reference.h): random shapes and
// attribute combinations (1-D and 2-D, groups incl. depthwise, strides, dilations, pads, auto_pad,
// output_padding / output_shape), every path (direct, GEMM, chunked GEMM with a reduced chunk
// limit, implicit GEMM at every tile height, overlap-add; 3-D on the direct path), X and Y bound in
// windows / slices under a reduced binding limit (and one real input over lavapipe's 128 MiB), fused
// activations, f32 and f16 storage, empty spatial inputs, the attribute formulas and bad input.
// Every output is poisoned before the run.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpu/command_recorder.h"
#include "harness.h"
#include "kernels/conv/conv.h"
#include "kernels/conv/conv_plan.h"
#include "kernels/conv/conv_uniforms.h"
#include "ops/onnx_vocabulary.h"
#include "test_conv_reference.h"

namespace onda::test {
namespace {

using namespace kernels::conv;

constexpr double kConvF16Bound = 1e-3;

struct ConvCase {
  Shape x_shape, w_shape;
  ConvAttributes attributes;
  bool transpose = false;
  bool bias = true;
};

std::string describe(const ConvCase& c) {
  const auto& a = c.attributes;
  return fmt::format(
      "{} x{} w{} auto_pad={} strides={} dilations={} pads={} group={} output_padding={} output_shape={}{}",
      c.transpose ? "ConvTranspose" : "Conv", shape_string(c.x_shape), shape_string(c.w_shape),
      auto_pad_name(a.auto_pad), a.strides, a.dilations, a.pads, a.group, a.output_padding, a.output_shape,
      c.bias ? " +bias" : "");
}

struct Weights {
  bool prepack = false;
  bool diagonal = false;  // pass the weight as a windowed-identity diagonal
  bool check = false;     // pass the weight tensor with check_windowed_identity
};

// The fused activations in float64.
double activate(double v, const ConvOptions& options) {
  using kernels::gemm::Activation;
  switch (options.activation) {
    case Activation::relu:
      return std::max(v, 0.0);
    case Activation::leaky_relu:
      return v >= 0 ? v : options.activation_alpha * v;
    case Activation::sigmoid:
      return 1.0 / (1.0 + std::exp(-v));
    case Activation::tanh:
      return std::tanh(v);
    case Activation::gelu_erf:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    default:
      return v;
  }
}

// Runs one case; returns rel L2 against the float64 reference and prints it.
double run_case(const ConvCase& c, DType dtype, const ConvOptions& options, Random& random,
                Weights weights = {}, std::vector<float>* w_override = nullptr) {
  auto& g = gpu();
  const ConvGeometry geo = c.transpose ? resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes)
                                       : resolve_conv(c.x_shape, c.w_shape, c.attributes);
  const auto x = round_to_dtype(random.normal(element_count(c.x_shape)), dtype);
  const auto w = w_override ? *w_override : round_to_dtype(random.normal(element_count(c.w_shape)), dtype);
  const auto bias = c.bias ? round_to_dtype(random.normal(geo.out_channels), dtype) : std::vector<float>();
  std::vector<double> ref = reference_conv(geo, x, w, bias);
  for (double& v : ref) v = activate(v, options);

  const Tensor tx = x.empty() ? Tensor::empty(g.pool, dtype, c.x_shape) : upload_floats(x, dtype, c.x_shape);
  const Tensor tw = upload_floats(w, dtype, c.w_shape);
  const Tensor tb = c.bias ? upload_floats(bias, dtype, {geo.out_channels}) : Tensor();
  const Tensor ty = poisoned(dtype, geo.output_shape());
  gpu::CommandRecorder recorder(g.context);
  if (c.transpose) {
    ConvTransposeWeights cw;
    std::optional<kernels::gemm::PackedB> packed;
    if (weights.diagonal) {
      cw.diagonal = windowed_identity_diagonal(c.w_shape, w);
      EXPECT_TRUE(cw.diagonal.has_value());
    } else {
      cw.w = tw;
      cw.check_windowed_identity = weights.check;
    }
    if (weights.prepack) {
      packed = prepack_conv_transpose_weight(kc(), g.pool, recorder, tw);
      cw.packed = &*packed;
    }
    record_conv_transpose(kc(), recorder, g.pool, geo, cw, tx, tb, ty, options);
  } else {
    record_conv(kc(), recorder, g.pool, geo, tx, tw, tb, ty, options);
  }
  recorder.submit_and_wait();
  const auto out = ty.download_floats(g.context);
  const double err = ref.empty() ? 0.0 : rel_l2(out, ref);
  std::printf("  %-9s %s path=%d chunk=%llu act=%s: rel L2 %.3g\n", std::string(dtype_name(dtype)).c_str(),
              describe(c).c_str(), static_cast<int>(options.path),
              static_cast<unsigned long long>(options.max_chunk_bytes),
              std::string(kernels::gemm::activation_name(options.activation)).c_str(), err);
  return err;
}

// A random valid case. `gemm_friendly`: group 1 and more channels.
// At least 8 outputs: rel L2 over one or two outputs is the relative error of a single dot product,
// which near-cancellation makes arbitrarily large (x[1,2,6] * w[1,2,3], VALID, stride 3: one
// output, 1.7e-5 in float32 although every product and sum is right).
bool enough_outputs(const ConvGeometry& g) {
  return g.batch * g.out_channels * g.out_positions() >= 8;
}

ConvCase random_case(Random& r, bool transpose, int64_t rank, bool gemm_friendly) {
  for (;;) {
    ConvCase c;
    c.transpose = transpose;
    auto& a = c.attributes;
    const int64_t group = gemm_friendly ? 1 : r.integer(1, 3);
    const bool depthwise = !gemm_friendly && r.integer(0, 3) == 0;
    const int64_t cin_g = depthwise ? 1 : r.integer(1, gemm_friendly ? 12 : 3);
    const int64_t cout_g = r.integer(1, gemm_friendly ? 10 : 3);
    a.group = depthwise ? r.integer(2, 5) : group;
    const int64_t cin = cin_g * a.group, cout = cout_g * a.group;
    c.x_shape = {r.integer(1, 2), cin};
    c.w_shape = transpose ? Shape{cin, cout_g} : Shape{cout, cin_g};
    std::vector<int64_t> pads_end;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t k = r.integer(1, 3), s = r.integer(1, 3), dl = r.integer(1, 2);
      c.w_shape.push_back(k);
      c.x_shape.push_back(r.integer(1, rank == 1 ? 12 : rank == 2 ? 7 : 4));
      a.strides.push_back(s);
      a.dilations.push_back(dl);
      a.pads.push_back(r.integer(0, 2));
      pads_end.push_back(r.integer(0, 2));
      if (transpose) a.output_padding.push_back(r.integer(0, std::max(s, dl) - 1));
    }
    a.pads.insert(a.pads.end(), pads_end.begin(), pads_end.end());
    if (r.integer(0, 1)) a.kernel_shape.assign(c.w_shape.begin() + 2, c.w_shape.end());
    static const AutoPad kAutoPads[] = {AutoPad::explicit_pads, AutoPad::same_upper, AutoPad::same_lower,
                                        AutoPad::valid};
    a.auto_pad = kAutoPads[r.integer(0, 3)];
    if (a.auto_pad != AutoPad::explicit_pads) a.pads.clear();
    if (transpose && r.integer(0, 3) == 0) {
      // output_shape: the natural size minus a random total padding.
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t full = a.strides[d] * (c.x_shape[2 + d] - 1) + a.output_padding[d] +
                             (c.w_shape[2 + d] - 1) * a.dilations[d] + 1;
        a.output_shape.push_back(std::max<int64_t>(1, full - r.integer(-2, 3)));  // < 0: extra outputs
      }
    }
    c.bias = r.integer(0, 3) != 0;
    try {
      const ConvGeometry g =
          transpose ? resolve_conv_transpose(c.x_shape, c.w_shape, a) : resolve_conv(c.x_shape, c.w_shape, a);
      if (enough_outputs(g)) return c;
    } catch (const std::invalid_argument&) {
      // a kernel larger than the padded input: draw again
    }
  }
}

// A chunk limit of `units` times the smallest one the GEMM path accepts: one output position (Conv)
// or one outermost input row (ConvTranspose) per chunk for units = 1.
uint64_t small_chunk(const ConvCase& c, int64_t units) {
  const ConvGeometry g = c.transpose ? resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes)
                                     : resolve_conv(c.x_shape, c.w_shape, c.attributes);
  const int64_t taps = g.kernel_elements();
  if (!g.transpose) return static_cast<uint64_t>(4 * std::max(g.in_channels * taps, g.out_channels) * units);
  const int64_t inner = g.in_positions() / g.in_size[0];
  return static_cast<uint64_t>(4 * std::max(g.out_channels * taps, g.in_channels) * inner * units);
}

// chunk_units > 0: chunked runs with small_chunk(case, chunk_units + i % 3).
// unit_dilation: dilations forced to 1 (the implicit ConvTranspose's domain).
void random_sweep(bool transpose, ConvPath path, bool gemm_friendly, int cases, int64_t chunk_units = 0,
                  bool prepack = false, bool unit_dilation = false) {
  const uint64_t seed = test_seed();
  Random r(seed);
  for (int i = 0; i < cases; ++i) {
    const int64_t rank = path == ConvPath::direct ? 1 + i % 3 : 1 + i % 2;
    ConvCase c = random_case(r, transpose, rank, gemm_friendly);
    if (unit_dilation) {
      c.attributes.dilations.assign(rank, 1);
      try {
        const ConvGeometry g = resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes);
        if (!enough_outputs(g)) continue;
      } catch (const std::invalid_argument&) {
        continue;  // output_shape / output_padding drawn for the dilated kernel
      }
    }
    const DType dtype = i % 3 == 2 ? DType::f16 : DType::f32;
    ConvOptions options;
    options.path = path;
    options.max_chunk_bytes = chunk_units > 0 ? small_chunk(c, chunk_units + i % 3) : 0;
    const double err = run_case(c, dtype, options, r, {prepack && i % 2 == 0, false});
    EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c) << " seed " << seed;
  }
}

TEST(Conv, DirectRandomAttributes) {
  random_sweep(false, ConvPath::direct, false, 24);
}
TEST(Conv, GemmRandomAttributes) {
  random_sweep(false, ConvPath::gemm, true, 12);
}
// Chunks of 1 to 3 output positions of one batch.
TEST(Conv, ImplicitGemmRandomAttributes) {
  random_sweep(false, ConvPath::implicit_gemm, true, 16);
}

// The implicit GEMM's tiles at the channel counts of real models (UVR: 38..672 in, 24..384 out):
// every output-channel tile height the planner picks, partial channel chunks (C_in not a multiple of
// BK), partial position tiles (odd sizes), strides, dilations, batch 2, both position tiles, f16.
TEST(Conv, ImplicitGemmWideChannels) {
  Random r(test_seed());
  struct Wide {
    Shape x, w;
    std::vector<int64_t> strides, pads, dilations;
    int nv;
    DType dtype;
  };
  const Wide cases[] = {
      {{1, 145, 9, 14}, {48, 145, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, DType::f32},
      {{2, 38, 11, 7}, {96, 38, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, DType::f32},
      {{1, 73, 13, 9}, {24, 73, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, DType::f32},
      {{1, 96, 12, 10}, {144, 96, 3, 3}, {1, 1}, {4, 2, 4, 2}, {4, 2}, 0, DType::f32},
      {{1, 40, 17, 5}, {200, 40, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, DType::f32},
      {{1, 33, 8, 12}, {72, 33, 3, 3}, {2, 1}, {0, 1, 2, 1}, {1, 2}, 2, DType::f16},
      {{2, 20, 5, 41}, {130, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 0, DType::f16},
  };
  for (const Wide& wc : cases) {
    ConvCase c;
    c.x_shape = wc.x;
    c.w_shape = wc.w;
    c.attributes.strides = wc.strides;
    c.attributes.pads = wc.pads;
    c.attributes.dilations = wc.dilations;
    // Small images: the planner splits K (here into up to 7 slices); also without the split and
    // with 2 slices, which leaves the last one short, both with the next K step prefetched.
    for (const int splits : {0, 1, 2}) {
      ConvOptions options{ConvPath::implicit_gemm, 0};
      options.implicit_nv = wc.nv;
      options.implicit_splits = splits;
      options.implicit_prefetch = splits != 0;  // the register-prefetch variant on two of the three
      if (splits == 2) options.activation = kernels::gemm::Activation::leaky_relu;
      const double err = run_case(c, wc.dtype, options, r);
      EXPECT_LE(err, wc.dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c) << " splits " << splits;
    }
  }
}

TEST(Conv, GemmChunked) {
  random_sweep(false, ConvPath::gemm, true, 8, 1);
}

TEST(ConvTranspose, DirectRandomAttributes) {
  random_sweep(true, ConvPath::direct, false, 24);
}
TEST(ConvTranspose, GemmRandomAttributes) {
  random_sweep(true, ConvPath::gemm, true, 12, 0, true);
}
// Small chunks: row slabs of one batch, each gathering only into the output rows it reaches.
// Per stride phase (any stride, pads, output_padding, output_shape, kernel not a multiple of the
// stride; phases with empty q ranges), with and without split K.
TEST(ConvTranspose, ImplicitGemmRandomAttributes) {
  random_sweep(true, ConvPath::implicit_gemm, true, 20, 0, false, true);
}

// The decoders' shapes scaled down: HTDemucs' kernel 8 stride 4 (2-D along frequency, 1-D in time),
// SCNet's kernel 4 stride 4 (phases of one tap), kernels not a multiple of the stride, pads that
// crop, batch 2, every split of K the planner may choose and forced, f16, a fused activation.
TEST(ConvTranspose, ImplicitGemmDecoderShapes) {
  Random r(test_seed());
  struct Wide {
    Shape x, w;
    std::vector<int64_t> strides, pads, output_padding;
    int splits;
    DType dtype;
  };
  const Wide cases[] = {
      {{1, 48, 10, 7}, {48, 24, 8, 1}, {4, 1}, {0, 0, 0, 0}, {0, 0}, 0, DType::f32},
      {{2, 40, 6, 5}, {40, 16, 4, 1}, {4, 1}, {0, 0, 0, 0}, {0, 0}, 0, DType::f32},
      {{1, 96, 9}, {96, 12, 8}, {4}, {2, 2}, {0}, 0, DType::f32},
      {{1, 37, 5, 6}, {37, 20, 5, 3}, {3, 2}, {1, 2, 2, 0}, {1, 1}, 3, DType::f32},
      {{2, 19, 11}, {19, 9, 7}, {3}, {4, 1}, {2}, 1, DType::f16},
      {{1, 130, 4, 4}, {130, 72, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 0}, 0, DType::f32},
      {{1, 24, 7, 3}, {24, 33, 2, 2}, {1, 1}, {0, 0, 0, 0}, {0, 0}, 2, DType::f16},
      // Kernel == stride (one shuffled GEMM of all phases): C_out not a multiple of 4 (padded phase
      // rows), pads that crop both ends, 2-D strides in both dimensions, split K, f16.
      {{1, 21, 5, 6}, {21, 10, 2, 3}, {2, 3}, {1, 0, 1, 2}, {0, 0}, 0, DType::f32},
      {{2, 33, 13}, {33, 9, 4}, {4}, {3, 2}, {0}, 3, DType::f32},
      {{1, 16, 4, 9}, {16, 12, 4, 1}, {4, 1}, {0, 0, 0, 0}, {0, 0}, 0, DType::f16},
  };
  int i = 0, shuffled = 0;
  for (const Wide& wc : cases) {
    ConvCase c;
    c.transpose = true;
    c.x_shape = wc.x;
    c.w_shape = wc.w;
    c.attributes.strides = wc.strides;
    c.attributes.pads = wc.pads;
    c.attributes.output_padding = wc.output_padding;
    ConvOptions options{ConvPath::implicit_gemm, 0};
    options.implicit_splits = wc.splits;
    options.implicit_prefetch = i % 2 == 1;
    if (i++ == 3) options.activation = kernels::gemm::Activation::relu;
    const ConvGeometry g = resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes);
    EXPECT_TRUE(automatic_takes_implicit(g) || g.in_channels < 8 || g.out_channels < 8) << describe(c);
    const double err = run_case(c, wc.dtype, options, r);
    EXPECT_LE(err, wc.dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c) << " splits " << wc.splits;
    if (kernels::conv::detail::shuffle_applies(g)) {  // the same case per phase
      ++shuffled;
      options.implicit_shuffle = false;
      const double phases_err = run_case(c, wc.dtype, options, r);
      EXPECT_LE(phases_err, wc.dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c) << " per phase";
    }
  }
  EXPECT_EQ(shuffled, 4) << "kernel == stride cases run as one shuffled GEMM";
}

TEST(ConvTranspose, GemmChunked) {
  random_sweep(true, ConvPath::gemm, true, 8, 1, true);
}

TEST(ConvTranspose, ChunkedRowsOverlap) {
  // Long 1-D and 2-D inputs, kernels longer than the stride (outputs shared between chunks).
  Random r(test_seed());
  for (int64_t rank : {1, 2}) {
    ConvCase c;
    c.transpose = true;
    c.x_shape = rank == 1 ? Shape{2, 5, 40} : Shape{2, 5, 9, 6};
    c.w_shape = rank == 1 ? Shape{5, 3, 7} : Shape{5, 3, 4, 3};
    c.attributes.strides.assign(rank, 2);
    c.attributes.pads.assign(2 * rank, 1);
    for (const int64_t units : {1, 2, 5}) {
      ConvOptions options{ConvPath::gemm, small_chunk(c, units)};
      const double err = run_case(c, DType::f32, options, r);
      EXPECT_LE(err, kF32Bound) << describe(c);
    }
  }
}

TEST(Conv, AutomaticPathLargerChannels) {
  Random r(test_seed());
  ConvCase c;
  c.x_shape = {1, 24, 10, 9};
  c.w_shape = {32, 24, 3, 3};
  c.attributes.pads = {1, 1, 1, 1};
  EXPECT_EQ(choose_conv_path(resolve_conv(c.x_shape, c.w_shape, c.attributes), false), ConvPath::gemm);
  EXPECT_TRUE(automatic_takes_implicit(resolve_conv(c.x_shape, c.w_shape, c.attributes)));
  EXPECT_LE(run_case(c, DType::f32, {}, r), kF32Bound);
  EXPECT_LE(run_case(c, DType::f16, {}, r), kConvF16Bound);
  ConvOptions im2col;
  im2col.allow_implicit = false;  // the old automatic choice: im2col + GEMM
  EXPECT_LE(run_case(c, DType::f32, im2col, r), kF32Bound);
  // Few output channels (UVR's 12-channel band nets): direct geometry, run as the implicit GEMM.
  c.x_shape = {1, 37, 9, 11};
  c.w_shape = {12, 37, 3, 3};
  const ConvGeometry narrow = resolve_conv(c.x_shape, c.w_shape, c.attributes);
  EXPECT_EQ(choose_conv_path(narrow, false), ConvPath::direct);
  EXPECT_TRUE(automatic_takes_implicit(narrow));
  EXPECT_LE(run_case(c, DType::f32, {}, r), kF32Bound);
  c.w_shape = {4, 37, 3, 3};  // too few: stays direct
  EXPECT_FALSE(automatic_takes_implicit(resolve_conv(c.x_shape, c.w_shape, c.attributes)));
  // Pointwise with few input channels (HTDemucs' DConv expand, 6 -> 96): a GEMM, not direct.
  c.x_shape = {3, 6, 5, 7};
  c.w_shape = {24, 6, 1, 1};
  c.attributes.pads = {0, 0, 0, 0};
  const ConvGeometry expand = resolve_conv(c.x_shape, c.w_shape, c.attributes);
  EXPECT_EQ(choose_conv_path(expand, false), ConvPath::gemm);
  EXPECT_TRUE(automatic_takes_implicit(expand));
  EXPECT_LE(run_case(c, DType::f32, {}, r), kF32Bound);
  EXPECT_LE(run_case(c, DType::f16, {}, r), kConvF16Bound);
  EXPECT_LE(run_case(c, DType::f32, {ConvPath::gemm, 0}, r), kF32Bound);
}

TEST(Conv, PointwiseGemmReadsInputDirectly) {
  Random r(test_seed());
  ConvCase c;
  c.x_shape = {2, 20, 7, 5};
  c.w_shape = {17, 20, 1, 1};
  for (DType dtype : {DType::f32, DType::f16}) {
    const double err = run_case(c, dtype, {ConvPath::gemm, 0}, r);
    EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound);
    c.bias = !c.bias;
  }
  c.x_shape = {3, 16, 33};  // 1-D, odd sizes, f16 batch offsets
  c.w_shape = {18, 16, 1};
  EXPECT_LE(run_case(c, DType::f16, {}, r), kConvF16Bound);
}

// X and Y larger than the binding limit (ConvOptions::max_binding_bytes lowered): bound in windows
// of input channels (a band of input rows at the ends) and of output channels, the columns in
// chunks of output positions. `channels_per_window` ~ whole input channels one binding holds
// (0.3: not even one channel, the band of rows alone).
TEST(Conv, GemmWindowedInputAndOutput) {
  Random r(test_seed());
  struct Windowed {
    Shape x, w;
    std::vector<int64_t> strides, dilations, pads;
  };
  const Windowed cases[] = {
      {{1, 5, 37, 29}, {7, 5, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      {{2, 5, 37, 29}, {7, 5, 3, 2}, {2, 1}, {2, 3}, {2, 0, 1, 3}},
      {{2, 5, 701}, {7, 5, 5}, {2}, {3}, {4, 4}},
      {{1, 3, 9, 11, 10}, {4, 3, 3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 2, 1, 1, 1}},
  };
  for (const Windowed& wc : cases) {
    ConvCase c;
    c.x_shape = wc.x;
    c.w_shape = wc.w;
    c.attributes.strides = wc.strides;
    c.attributes.dilations = wc.dilations;
    c.attributes.pads = wc.pads;
    const int64_t in_positions = element_count(wc.x) / wc.x[0] / wc.x[1];
    for (DType dtype : {DType::f32, DType::f16}) {
      for (const double channels_per_window : {2.5, 0.3}) {
        ConvOptions options{ConvPath::gemm, 0};
        const double bytes =
            channels_per_window * in_positions * static_cast<double>(device_element_size(dtype));
        options.max_binding_bytes = 272 + static_cast<uint64_t>(bytes);
        ASSERT_LT(options.max_binding_bytes, element_count(wc.x) * device_element_size(dtype));
        const double err = run_case(c, dtype, options, r);
        std::printf("    binding limit %llu bytes\n",
                    static_cast<unsigned long long>(options.max_binding_bytes));
        EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound)
            << describe(c) << " binding limit " << options.max_binding_bytes;
        c.bias = !c.bias;
      }
    }
  }
}

// A real input over the device's binding limit (145 MiB > lavapipe's 128 MiB; skipped where bindings
// are larger): the automatic path (few output channels, yet gemm: one batch is over the limit for
// the direct path) runs im2col per window of input channels.
TEST(Conv, InputOverDeviceBindingLimit) {
  ConvCase c;
  c.x_shape = {1, 17, 2048, 1040};
  c.w_shape = {3, 17, 1, 1};
  const uint64_t x_bytes = element_count(c.x_shape) * 4;
  if (gpu().context.limits().maxStorageBufferBindingSize >= x_bytes) GTEST_SKIP() << "bindings hold X whole";
  Random r(test_seed());
  EXPECT_LE(run_case(c, DType::f32, {}, r), kF32Bound);
}

// ConvTranspose on the gemm path with X and Y larger than the binding limit: input rows gathered
// per window of input channels, col2im and the in-place activation per window of Y.
TEST(ConvTranspose, GemmWindowedInputAndOutput) {
  Random r(test_seed());
  struct Windowed {
    Shape x, w;
    int64_t stride, pad;
  };
  const Windowed cases[] = {{{1, 12, 23, 19}, {12, 7, 3, 3}, 2, 1}, {{2, 9, 301}, {9, 7, 4}, 2, 1}};
  for (const Windowed& wc : cases) {
    ConvCase c;
    c.transpose = true;
    c.x_shape = wc.x;
    c.w_shape = wc.w;
    const int64_t rank = static_cast<int64_t>(wc.x.size()) - 2;
    c.attributes.strides.assign(rank, wc.stride);
    c.attributes.pads.assign(2 * rank, wc.pad);
    const ConvGeometry g = resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes);
    for (DType dtype : {DType::f32, DType::f16}) {
      for (const auto activation : {kernels::gemm::Activation::none, kernels::gemm::Activation::tanh}) {
        ConvOptions options{ConvPath::gemm, 0};
        options.activation = activation;
        // About 2.5 output channels of Y per binding (more than 2.5 input channels of X).
        options.max_binding_bytes =
            272 +
            static_cast<uint64_t>(2.5 * g.out_positions() * static_cast<double>(device_element_size(dtype)));
        ASSERT_LT(options.max_binding_bytes, element_count(wc.x) * device_element_size(dtype));
        const double err = run_case(c, dtype, options, r);
        std::printf("    binding limit %llu bytes\n",
                    static_cast<unsigned long long>(options.max_binding_bytes));
        EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound)
            << describe(c) << " binding limit " << options.max_binding_bytes;
        c.bias = !c.bias;
      }
    }
  }
}

// The direct paths (grouped / depthwise Conv and ConvTranspose) with X and Y larger than the binding
// limit: slices of whole batches, else of whole groups of one batch.
TEST(Conv, DirectSlicedByBatchesAndGroups) {
  Random r(test_seed());
  struct Sliced {
    bool transpose;
    Shape x, w;
    int64_t group;
  };
  const Sliced cases[] = {
      {false, {3, 6, 20, 17}, {6, 1, 3, 3}, 6},  // depthwise 2-D
      {false, {2, 8, 301}, {12, 2, 5}, 4},       // grouped 1-D
      {true, {2, 6, 40}, {6, 2, 4}, 3},          // grouped ConvTranspose 1-D
  };
  for (const Sliced& sc : cases) {
    ConvCase c;
    c.transpose = sc.transpose;
    c.x_shape = sc.x;
    c.w_shape = sc.w;
    c.attributes.group = sc.group;
    c.attributes.strides.assign(sc.x.size() - 2, sc.transpose ? 2 : 1);
    c.attributes.pads.assign(2 * (sc.x.size() - 2), 1);
    const ConvGeometry g = sc.transpose ? resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes)
                                        : resolve_conv(c.x_shape, c.w_shape, c.attributes);
    const int64_t batch_elements = std::max(element_count(sc.x), element_count(g.output_shape())) / sc.x[0];
    for (DType dtype : {DType::f32, DType::f16}) {
      // Bindings of about 1.5 batches (batch slices), then of about 2.5 groups of a batch.
      for (const double batches : {1.5, 2.5 / static_cast<double>(sc.group)}) {
        ConvOptions options{ConvPath::direct, 0};
        options.max_binding_bytes =
            272 +
            static_cast<uint64_t>(batches * batch_elements * static_cast<double>(device_element_size(dtype)));
        const double err = run_case(c, dtype, options, r);
        std::printf("    binding limit %llu bytes\n",
                    static_cast<unsigned long long>(options.max_binding_bytes));
        EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound)
            << describe(c) << " binding limit " << options.max_binding_bytes;
        c.bias = !c.bias;
      }
    }
  }
}

ConvCase overlap_add_case(int64_t n_fft, int64_t hop, int64_t frames, int64_t pad) {
  ConvCase c;
  c.transpose = true;
  c.x_shape = {3, n_fft, frames};
  c.w_shape = {n_fft, 1, n_fft};
  c.attributes.strides = {hop};
  c.attributes.pads = {pad, pad};
  c.bias = false;
  return c;
}

std::vector<float> windowed_identity(int64_t n_fft, Random& r) {
  std::vector<float> w(n_fft * n_fft, 0.0f);
  const auto window = r.uniform(n_fft, 0.0, 1.0);
  for (int64_t k = 0; k < n_fft; ++k) w[k * n_fft + k] = window[k];
  return w;
}

TEST(ConvTranspose, WindowedIdentityOverlapAdd) {
  Random r(test_seed());
  for (const auto& [n_fft, hop, frames, pad] :
       {std::tuple{16, 4, 9, 8}, std::tuple{12, 3, 5, 0}, std::tuple{10, 4, 7, 3}}) {
    ConvCase c = overlap_add_case(n_fft, hop, frames, pad);
    auto w = windowed_identity(n_fft, r);
    const ConvGeometry g = resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes);
    EXPECT_EQ(choose_conv_path(g, true), ConvPath::overlap_add);
    for (DType dtype : {DType::f32, DType::f16}) {
      auto wd = round_to_dtype(w, dtype);
      ConvOptions options{ConvPath::overlap_add, 0};
      const double err = run_case(c, dtype, options, r, {false, true}, &wd);
      EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c);
      c.bias = !c.bias;
    }
    // The dense GEMM path on the same weight agrees with the reference too.
    EXPECT_LE(run_case(c, DType::f32, {ConvPath::gemm, 0}, r, {}, &w), kF32Bound);
  }
  // Detection: a single off-diagonal entry is not a windowed identity.
  {
    // The GPU-checked variant (weight only on the GPU): exact for a windowed identity, and the
    // dense fallback inside the kernel when an off-diagonal entry is non-zero.
    ConvCase c = overlap_add_case(16, 4, 7, 3);
    c.bias = true;
    auto identity = windowed_identity(16, r);
    auto dense = identity;
    dense[3 * 16 + 9] = 0.75f;
    dense[15 * 16 + 0] = -0.5f;
    for (auto* w : {&identity, &dense}) {
      for (DType dtype : {DType::f32, DType::f16}) {
        auto wd = round_to_dtype(*w, dtype);
        const double err = run_case(c, dtype, {ConvPath::overlap_add, 0}, r, {false, false, true}, &wd);
        EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound)
            << (w == &dense ? "dense fallback" : "identity");
      }
    }
  }
  auto w = windowed_identity(8, r);
  EXPECT_TRUE(windowed_identity_diagonal({8, 1, 8}, w).has_value());
  w[1 * 8 + 2] = 0.5f;
  EXPECT_FALSE(windowed_identity_diagonal({8, 1, 8}, w).has_value());
  EXPECT_FALSE(windowed_identity_diagonal({8, 2, 8}, std::vector<float>(128, 0.0f)).has_value());
}

// Hops >= 32 run the tiled overlap-add (tiles of 32 hops x 32 offsets): hop not dividing n_fft, hop
// above n_fft (gaps), pads that start mid-hop, several hop tiles, f16, bias, the GPU-checked variant
// with its dense fallback, and a fused activation.
TEST(ConvTranspose, WindowedIdentityOverlapAddTiled) {
  Random r(test_seed());
  for (const auto& [n_fft, hop, frames, pad] :
       {std::tuple{128, 32, 9, 0}, std::tuple{100, 40, 7, 17}, std::tuple{256, 64, 5, 128},
        std::tuple{40, 48, 6, 5}, std::tuple{96, 32, 40, 3}}) {
    ConvCase c = overlap_add_case(n_fft, hop, frames, pad);
    const auto w = windowed_identity(n_fft, r);
    for (DType dtype : {DType::f32, DType::f16}) {
      auto wd = round_to_dtype(w, dtype);
      const double err = run_case(c, dtype, {ConvPath::overlap_add, 0}, r, {false, true}, &wd);
      EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound) << describe(c);
      c.bias = !c.bias;
    }
  }
  ConvCase c = overlap_add_case(64, 32, 6, 16);
  c.bias = true;
  auto identity = windowed_identity(64, r);
  auto dense = identity;
  dense[5 * 64 + 40] = 0.5f;
  for (auto* w : {&identity, &dense}) {
    for (DType dtype : {DType::f32, DType::f16}) {
      auto wd = round_to_dtype(*w, dtype);
      const double err = run_case(c, dtype, {ConvPath::overlap_add, 0}, r, {false, false, true}, &wd);
      EXPECT_LE(err, dtype == DType::f16 ? kConvF16Bound : kF32Bound)
          << (w == &dense ? "dense fallback" : "identity");
    }
  }
  ConvOptions options{ConvPath::overlap_add, 0};
  options.activation = kernels::gemm::Activation::leaky_relu;
  options.activation_alpha = 0.3f;
  EXPECT_LE(run_case(c, DType::f32, options, r, {false, true}, &identity), kF32Bound);
  options.per_output_overlap_add = true;  // the untiled kernel on the same case
  EXPECT_LE(run_case(c, DType::f32, options, r, {false, true}, &identity), kF32Bound);
}

TEST(Conv, FusedActivationEveryPath) {
  using kernels::gemm::Activation;
  Random r(test_seed());
  const Activation activations[] = {Activation::relu, Activation::leaky_relu, Activation::sigmoid,
                                    Activation::tanh, Activation::gelu_erf};
  ConvCase conv;
  conv.x_shape = {2, 6, 9};
  conv.w_shape = {5, 6, 3};
  conv.attributes.pads = {1, 1};
  ConvCase up;
  up.transpose = true;
  up.x_shape = {2, 6, 12};
  up.w_shape = {6, 4, 5};
  up.attributes.strides = {2};
  int i = 0;
  for (const ConvCase* c : {&conv, &up}) {
    for (const ConvPath path : {ConvPath::direct, ConvPath::gemm, ConvPath::implicit_gemm}) {
      for (const bool chunked : {false, true}) {
        if (path != ConvPath::gemm && chunked) continue;
        ConvOptions options{path, chunked ? small_chunk(*c, 2) : 0};
        options.activation = activations[i++ % 5];
        options.activation_alpha = 0.2f;
        EXPECT_LE(run_case(*c, DType::f32, options, r), kF32Bound) << describe(*c);
      }
    }
  }
  ConvCase ola = overlap_add_case(16, 4, 5, 2);
  ola.bias = true;
  auto w = windowed_identity(16, r);
  ConvOptions options{ConvPath::overlap_add, 0};
  options.activation = Activation::tanh;
  EXPECT_LE(run_case(ola, DType::f32, options, r, {false, true}, &w), kF32Bound);
}

TEST(Conv, EmptySpatialInputWritesBias) {
  Random r(test_seed());
  ConvCase t;
  t.transpose = true;
  t.x_shape = {2, 3, 0};
  t.w_shape = {3, 2, 4};
  t.attributes.strides = {2};  // output 2 * (0 - 1) + 4 = 2
  for (const bool bias : {true, false}) {
    t.bias = bias;
    for (ConvPath path : {ConvPath::automatic, ConvPath::direct, ConvPath::gemm}) {
      EXPECT_EQ(run_case(t, DType::f32, {path, 0}, r), 0.0);
    }
  }
  ConvCase c;
  c.x_shape = {1, 2, 0, 3};
  c.w_shape = {4, 2, 1, 1};
  c.attributes.pads = {1, 0, 1, 0};  // output [2, 3]: padding only
  EXPECT_EQ(run_case(c, DType::f32, {}, r), 0.0);
}

TEST(ConvGeometry, AttributeFormulas) {
  // Conv SAME_UPPER / SAME_LOWER: in 5, k 4, s 2 -> out 3, total pad 3, split 1/2 or 2/1.
  ConvAttributes a;
  a.strides = {2};
  a.auto_pad = AutoPad::same_upper;
  ConvGeometry g = resolve_conv({1, 1, 5}, {1, 1, 4}, a);
  EXPECT_EQ(g.out_size, (std::vector<int64_t>{3}));
  EXPECT_EQ(g.pads_begin, (std::vector<int64_t>{1}));
  EXPECT_EQ(g.pads_end, (std::vector<int64_t>{2}));
  a.auto_pad = AutoPad::same_lower;
  g = resolve_conv({1, 1, 5}, {1, 1, 4}, a);
  EXPECT_EQ(g.pads_begin, (std::vector<int64_t>{2}));
  a.auto_pad = AutoPad::valid;
  g = resolve_conv({1, 1, 5}, {1, 1, 4}, a);
  EXPECT_EQ(g.out_size, (std::vector<int64_t>{1}));
  // ConvTranspose: in 3, s 3, k 3, output_padding 1 -> 3*2 + 1 + 3 = 10; output_shape 8 -> total 2.
  ConvAttributes t;
  t.strides = {3};
  t.output_padding = {1};
  g = resolve_conv_transpose({1, 1, 3}, {1, 2, 3}, t);
  EXPECT_EQ(g.out_size, (std::vector<int64_t>{10}));
  EXPECT_EQ(g.out_channels, 2);
  t.output_shape = {8};
  g = resolve_conv_transpose({1, 1, 3}, {1, 2, 3}, t);
  EXPECT_EQ(g.out_size, (std::vector<int64_t>{8}));
  EXPECT_EQ(g.pads_begin, (std::vector<int64_t>{1}));  // NOTSET: the odd pixel goes first
  t.auto_pad = AutoPad::same_upper;
  t.output_shape.clear();
  t.output_padding.clear();
  g = resolve_conv_transpose({1, 1, 3}, {1, 2, 4}, t);  // out 9, total = 3*2 + 4 - 9 = 1
  EXPECT_EQ(g.out_size, (std::vector<int64_t>{9}));
  EXPECT_EQ(g.pads_begin, (std::vector<int64_t>{0}));
  EXPECT_EQ(g.pads_end, (std::vector<int64_t>{1}));
}

TEST(ConvGeometry, BadInputThrows) {
  ConvAttributes a;
  EXPECT_THROW(resolve_conv({1, 3, 5}, {2, 2, 3}, a), std::invalid_argument);  // channels
  a.group = 2;
  EXPECT_THROW(resolve_conv({1, 3, 5}, {2, 1, 3}, a), std::invalid_argument);  // 3 % 2
  a = {};
  a.kernel_shape = {2};
  EXPECT_THROW(resolve_conv({1, 1, 5}, {1, 1, 3}, a), std::invalid_argument);
  a = {};
  a.strides = {0};
  EXPECT_THROW(resolve_conv({1, 1, 5}, {1, 1, 3}, a), std::invalid_argument);
  a = {};
  EXPECT_THROW(ops::conv_auto_pad_from_onnx("SAME"), std::invalid_argument);  // the op layer parses it
  EXPECT_EQ(ops::conv_auto_pad_from_onnx("SAME_LOWER"), AutoPad::same_lower);
  a = {};
  a.pads = {1};
  EXPECT_THROW(resolve_conv({1, 1, 5}, {1, 1, 3}, a), std::invalid_argument);
  EXPECT_THROW(resolve_conv({1, 1, 2}, {1, 1, 3}, ConvAttributes{}),
               std::invalid_argument);  // kernel > input
  EXPECT_THROW(resolve_conv({1, 1}, {1, 1}, ConvAttributes{}), std::invalid_argument);
  // Tensors that do not match the geometry.
  auto& g = gpu();
  const ConvGeometry geo = resolve_conv({1, 2, 6}, {3, 2, 3}, ConvAttributes{});
  gpu::CommandRecorder recorder(g.context);
  const Tensor x = Tensor::empty(g.pool, DType::f32, {1, 2, 6});
  const Tensor w = Tensor::empty(g.pool, DType::f32, {3, 2, 2});
  const Tensor y = Tensor::empty(g.pool, DType::f32, geo.output_shape());
  EXPECT_THROW(record_conv(kc(), recorder, g.pool, geo, x, w, Tensor(), y), std::invalid_argument);
  // The implicit ConvTranspose forced where it cannot run (dilation 2): a clear error, no dispatch;
  // the automatic choice takes another path for the same geometry.
  ConvAttributes dilated;
  dilated.dilations = {2};
  const ConvGeometry tg = resolve_conv_transpose({1, 8, 5}, {8, 8, 3}, dilated);
  EXPECT_FALSE(automatic_takes_implicit(tg));
  const Tensor tx = Tensor::empty(g.pool, DType::f32, {1, 8, 5});
  const Tensor ty = Tensor::empty(g.pool, DType::f32, tg.output_shape());
  ConvTransposeWeights tw;
  tw.w = Tensor::empty(g.pool, DType::f32, {8, 8, 3});
  EXPECT_THROW(record_conv_transpose(kc(), recorder, g.pool, tg, tw, tx, Tensor(), ty, {ConvPath::implicit_gemm, 0}),
               std::invalid_argument);
}

// The implicit GEMM's packed weight ([phases][C_in + padding][taps][C_out] in f32) must fit a binding
// as X, W and Y do: a kernel == stride ConvTranspose whose packed weight (8 phases x 95 x 16 floats,
// 48.6 KB) exceeds a 40 KB binding limit while W (32 KB) does not runs on another path, and matches.
TEST(ConvTranspose, PackedWeightOverTheBindingLimitTakesAnotherPath) {
  ConvCase c;
  c.transpose = true;
  c.x_shape = {1, 64, 4};
  c.w_shape = {64, 16, 8};
  c.attributes.strides = {8};
  const ConvGeometry geo = resolve_conv_transpose(c.x_shape, c.w_shape, c.attributes);
  ASSERT_TRUE(automatic_takes_implicit(geo));
  ConvOptions options;
  options.max_binding_bytes = 40 * 1024;
  EXPECT_FALSE(kernels::conv::detail::conv_implicit_applies(
      kc(), geo, DType::f32, DType::f32, DType::f32, kernels::conv::detail::chunk_limits(kc(), options)));
  Random r(test_seed());
  EXPECT_LE(run_case(c, DType::f32, options, r), kF32Bound) << describe(c);
}

// A ConvPlan records any number of runs on fresh tensors (here on each path) without planning again,
// each matching float64, and refuses tensors of other dtypes or weight forms than it was planned for.
TEST(ConvPlan, RecordsManyRunsAndRefusesOtherOperands) {
  auto& g = gpu();
  Random r(test_seed());
  ConvCase c;
  c.x_shape = {2, 16, 37};
  c.w_shape = {24, 16, 3};
  c.attributes.strides = {2};
  const ConvGeometry geo = resolve_conv(c.x_shape, c.w_shape, c.attributes);
  for (const ConvPath path : {ConvPath::implicit_gemm, ConvPath::gemm, ConvPath::direct}) {
    ConvOptions options;
    options.path = path;
    const auto w = r.normal(element_count(c.w_shape)), bias = r.normal(geo.out_channels);
    ConvTensors t;
    t.weights.w = upload_floats(w, DType::f32, c.w_shape);
    t.bias = upload_floats(bias, DType::f32, {geo.out_channels});
    t.x = Tensor::empty(g.pool, DType::f32, c.x_shape);
    t.y = Tensor::empty(g.pool, DType::f32, geo.output_shape());
    const ConvPlan plan(kc(), geo, ConvOperands::of(kc(), t.x, t.weights, t.bias, t.y), options);
    EXPECT_EQ(plan.path(), path);
    const int64_t plans = ConvPlan::constructed();
    for (int run = 0; run < 3; ++run) {
      const auto x = r.normal(element_count(c.x_shape));
      t.x = upload_floats(x, DType::f32, c.x_shape);
      t.y = poisoned(DType::f32, geo.output_shape());
      gpu::CommandRecorder recorder(g.context);
      plan.record(recorder, g.pool, t);
      recorder.submit_and_wait();
      const double err = rel_l2(t.y.download_floats(g.context), reference_conv(geo, x, w, bias));
      EXPECT_LE(err, kF32Bound) << "path " << static_cast<int>(path) << " run " << run;
    }
    EXPECT_EQ(ConvPlan::constructed(), plans);
    gpu::CommandRecorder recorder(g.context);
    ConvTensors half = t;
    half.x = Tensor::empty(g.pool, DType::f16, c.x_shape);
    half.y = Tensor::empty(g.pool, DType::f16, geo.output_shape());
    EXPECT_THROW(plan.record(recorder, g.pool, half), std::invalid_argument);
    ConvTensors no_bias = t;
    no_bias.bias = Tensor();
    EXPECT_THROW(plan.record(recorder, g.pool, no_bias), std::invalid_argument);
  }
}

}  // namespace
}  // namespace onda::test
