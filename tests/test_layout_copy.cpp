// Layout kernels built on the index-map gather (Transpose, Slice, Concat, Split, Expand, Tile, Pad)
// against byte-exact CPU references: random shapes and parameters, every dtype (f16 with odd
// sizes), input and output views with element offsets, outputs poisoned (inside and around).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "kernels/layout/expand_tile.h"
#include "kernels/layout/index_map.h"
#include "kernels/layout/pad.h"
#include "kernels/layout/slice.h"
#include "kernels/layout/transpose.h"
#include "test_layout_util.h"

namespace onda::test {
namespace {

std::string dtype_label(DType t) {
  return std::string(dtype_name(t));
}

// Runs `record` writing into a poisoned output view and returns the mismatch count.
int64_t run_and_compare(Random& rng, const HostTensor& expected,
                        const std::function<void(gpu::CommandRecorder&, const Tensor&)>& record) {
  OutputView out = poisoned_view(expected.dtype, expected.shape, random_offset(rng, expected.dtype));
  gpu::CommandRecorder recorder(gpu().context);
  record(recorder, out.view);
  recorder.submit_and_wait();
  return count_mismatches(out, expected);
}

HostTensor transpose_reference(const HostTensor& in, const std::vector<int64_t>& perm) {
  const Shape out_shape = kernels::transpose_output_shape(in.shape, perm);
  return reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
    std::vector<int64_t> ic(c.size());
    for (size_t k = 0; k < c.size(); ++k) ic[perm[k]] = c[k];
    return flat_index(in.shape, ic);
  });
}

int64_t check_transpose(Random& rng, DType dtype, const Shape& shape, std::vector<int64_t> perm) {
  const HostTensor in = random_host(rng, dtype, shape);
  const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
  const HostTensor expected = transpose_reference(in, perm);
  const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
    kernels::record_transpose(layout_kc(), r, input, perm, out);
  });
  EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(shape) << " perm ["
                    << fmt::format("{}", fmt::join(perm, ",")) << "]";
  return bad;
}

TEST(LayoutTranspose, RandomPermutationsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 10; ++trial) {
      const Shape shape = random_shape(rng, 1, trial < 2 ? 8 : 5, trial < 2 ? 3 : 9);
      std::vector<int64_t> perm(shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng.engine());
      check_transpose(rng, dtype, shape, perm);
      ++cases;
    }
  }
  std::printf("Transpose: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutTranspose, TiledLastTwoDimsAndBatched) {
  Random rng(test_seed());
  for (DType dtype : all_dtypes()) {
    // [M, N] -> [N, M] across several tiles with ragged edges; odd M and odd strides make f16
    // output words straddle tiles.
    check_transpose(rng, dtype, {67, 45}, {1, 0});
    check_transpose(rng, dtype, {3, 33, 35}, {0, 2, 1});
    check_transpose(rng, dtype, {5, 9, 41}, {2, 1, 0});
    check_transpose(rng, dtype, {2, 201, 3, 40}, {0, 3, 2, 1});
    check_transpose(rng, dtype, {3, 66, 33}, {0, 2, 1});
    check_transpose(rng, dtype, {2, 5, 40, 7}, {0, 3, 2, 1});  // inner dim to the middle
    check_transpose(rng, dtype, {4, 34, 6}, {1, 2, 0});
  }
}

TEST(LayoutTranspose, RejectsBadPermutation) {
  Random rng(test_seed());
  const Tensor input = upload_view(rng, random_host(rng, DType::f32, {2, 3}), 0);
  Tensor out = poisoned(DType::f32, {3, 2});
  gpu::CommandRecorder r(gpu().context);
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input, std::vector<int64_t>{0, 0}, out),
               std::invalid_argument);
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input, std::vector<int64_t>{0, 1}, out),
               std::invalid_argument);
  // Rank 10 with nothing to coalesce: more than 8 dims is a clear error, not an overflow.
  const Shape big = {8, 2, 2, 2, 2, 2, 2, 2, 2, 8};
  const Tensor input10 = upload_view(rng, random_host(rng, DType::f32, big), 0);
  Tensor out10 = poisoned(DType::f32, big);
  const std::vector<int64_t> reverse = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  EXPECT_THROW(kernels::record_transpose(layout_kc(), r, input10, reverse, out10), std::invalid_argument);
}

TEST(LayoutSlice, RandomStartsEndsStepsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 10; ++trial) {
      const Shape shape = random_shape(rng, 1, 5, 9);
      const HostTensor in = random_host(rng, dtype, shape);
      std::vector<int64_t> starts, ends, axes, steps;
      for (size_t d = 0; d < shape.size(); ++d) {
        if (rng.integer(0, 2) == 0) continue;
        const int64_t dim = shape[d];
        int64_t step = rng.integer(1, 3) * (rng.integer(0, 1) ? 1 : -1);
        // Out-of-range and negative starts/ends exercise ONNX's clamping.
        starts.push_back(rng.integer(-dim - 2, dim + 2));
        ends.push_back(rng.integer(0, 5) == 0 ? (step > 0 ? INT64_MAX : INT64_MIN)
                                              : rng.integer(-dim - 2, dim + 2));
        axes.push_back(rng.integer(0, 1) ? static_cast<int64_t>(d)
                                         : static_cast<int64_t>(d) - static_cast<int64_t>(shape.size()));
        steps.push_back(step);
      }
      const auto dims = kernels::plan_slice(shape, starts, ends, axes, steps);
      const Shape out_shape = kernels::slice_output_shape(dims);
      // Reference straight from the ONNX definition (numpy slicing with the same clamps).
      std::vector<int64_t> s0(shape.size(), 0), st(shape.size(), 1);
      for (size_t k = 0; k < axes.size(); ++k) {
        const int64_t a = axes[k] < 0 ? axes[k] + static_cast<int64_t>(shape.size()) : axes[k];
        const int64_t dim = shape[a];
        int64_t s = starts[k] < 0 ? starts[k] + dim : starts[k];
        s = steps[k] > 0 ? std::clamp<int64_t>(s, 0, dim) : std::clamp<int64_t>(s, 0, dim - 1);
        s0[a] = s;
        st[a] = steps[k];
      }
      const HostTensor expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(c.size());
        for (size_t d = 0; d < c.size(); ++d) ic[d] = s0[d] + c[d] * st[d];
        return flat_index(shape, ic);
      });
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      const int64_t bad = run_and_compare(rng, expected, [&](gpu::CommandRecorder& r, const Tensor& out) {
        kernels::record_slice(layout_kc(), r, input, dims, out);
      });
      EXPECT_EQ(bad, 0) << dtype_label(dtype) << " " << shape_string(shape) << " -> "
                        << shape_string(out_shape);
      ++cases;
    }
  }
  std::printf("Slice: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutSlice, OnnxClampingRules) {
  // Cases from the ONNX Slice definition: end past the dim, negative step to the front, start past the end.
  const Shape shape = {10};
  auto one = [&](int64_t s, int64_t e, int64_t st) {
    const std::vector<int64_t> ss{s}, ee{e}, aa{0}, tt{st};
    return kernels::plan_slice(shape, ss, ee, aa, tt)[0];
  };
  auto d = one(2, 1000, 1);
  EXPECT_EQ(d.start, 2);
  EXPECT_EQ(d.size, 8);
  d = one(-1, INT64_MIN, -1);  // the reversed tensor
  EXPECT_EQ(d.start, 9);
  EXPECT_EQ(d.size, 10);
  d = one(20, -20, -3);
  EXPECT_EQ(d.start, 9);
  EXPECT_EQ(d.size, 4);  // 9, 6, 3, 0
  d = one(5, 2, 1);
  EXPECT_EQ(d.size, 0);
  const std::vector<int64_t> s{0}, e{1}, a{0}, zero{0};
  EXPECT_THROW(kernels::plan_slice(shape, s, e, a, zero), std::invalid_argument);
  const std::vector<int64_t> bad_axis{1};
  EXPECT_THROW(kernels::plan_slice(shape, s, e, bad_axis), std::invalid_argument);
}

TEST(LayoutConcatSplit, RandomAxesEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 6; ++trial) {
      const Shape base = random_shape(rng, 1, 4, 7);
      const int64_t axis = rng.integer(0, static_cast<int64_t>(base.size()) - 1);
      const int parts = static_cast<int>(rng.integer(1, 4));
      std::vector<HostTensor> pieces;
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
      HostTensor expected{dtype, out_shape,
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

TEST(LayoutExpandTile, RandomBroadcastsAndRepeatsEveryDtype) {
  Random rng(test_seed());
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int trial = 0; trial < 6; ++trial) {
      // Expand: an input with unit dims broadcast to a shape of possibly higher rank.
      const Shape target = random_shape(rng, 1, 5, 6);
      Shape in_shape(target.end() - rng.integer(0, static_cast<int64_t>(target.size())), target.end());
      for (auto& d : in_shape) {
        if (rng.integer(0, 1)) d = 1;
      }
      const Shape out_shape = kernels::expand_output_shape(in_shape, target);
      ASSERT_EQ(out_shape, target);
      const HostTensor in = random_host(rng, dtype, in_shape);
      const size_t lead = out_shape.size() - in_shape.size();
      const HostTensor expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(in_shape.size());
        for (size_t d = 0; d < in_shape.size(); ++d) ic[d] = in_shape[d] == 1 ? 0 : c[d + lead];
        return flat_index(in_shape, ic);
      });
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, expected,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_expand(layout_kc(), r, input, out);
                                }),
                0)
          << "Expand " << dtype_label(dtype) << " " << shape_string(in_shape) << " -> "
          << shape_string(out_shape);

      // Tile.
      const Shape tshape = random_shape(rng, 1, 4, 5);
      std::vector<int64_t> repeats(tshape.size());
      Shape tout(tshape.size());
      for (size_t d = 0; d < tshape.size(); ++d)
        repeats[d] = rng.integer(0, 3), tout[d] = tshape[d] * repeats[d];
      if (element_count(tout) == 0) repeats[0] = 1, tout[0] = tshape[0];
      for (size_t d = 0; d < tshape.size(); ++d) {
        if (repeats[d] == 0) repeats[d] = 2, tout[d] = 2 * tshape[d];
      }
      const HostTensor tin = random_host(rng, dtype, tshape);
      const HostTensor texpected = reference_gather(tin, tout, [&](const std::vector<int64_t>& c) {
        std::vector<int64_t> ic(c.size());
        for (size_t d = 0; d < c.size(); ++d) ic[d] = c[d] % tshape[d];
        return flat_index(tshape, ic);
      });
      const Tensor tinput = upload_view(rng, tin, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, texpected,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_tile(layout_kc(), r, tinput, repeats, out);
                                }),
                0)
          << "Tile " << dtype_label(dtype) << " " << shape_string(tshape) << " -> " << shape_string(tout);
      cases += 2;
    }
  }
  std::printf("Expand/Tile: %d random cases checked byte for byte\n", cases);
}

// numpy's pad index rules, written independently of the kernel's (loop-based reflection).
int64_t pad_source(int64_t x, int64_t n, kernels::PadMode mode) {
  if (x >= 0 && x < n) return x;
  switch (mode) {
    case kernels::PadMode::Constant:
      return -1;
    case kernels::PadMode::Edge:
      return x < 0 ? 0 : n - 1;
    case kernels::PadMode::Wrap:
      while (x < 0) x += n;
      return x % n;
    case kernels::PadMode::Reflect:
      if (n == 1) return 0;
      while (x < 0 || x >= n) x = x < 0 ? -x : 2 * (n - 1) - x;
      return x;
  }
  return -1;
}

TEST(LayoutPad, AllModesNegativePadsEveryDtype) {
  Random rng(test_seed());
  const kernels::PadMode modes[] = {kernels::PadMode::Constant, kernels::PadMode::Reflect,
                                    kernels::PadMode::Edge, kernels::PadMode::Wrap};
  const char* names[] = {"constant", "reflect", "edge", "wrap"};
  int cases = 0;
  for (DType dtype : all_dtypes()) {
    for (int m = 0; m < 4; ++m) {
      for (int trial = 0; trial < 3; ++trial) {
        const Shape shape = random_shape(rng, 1, 4, 7);
        const size_t rank = shape.size();
        std::vector<int64_t> pads(2 * rank);
        std::vector<int64_t> crop_begin(rank), left(rank), pad_begin(rank);
        for (size_t d = 0; d < rank; ++d) {
          // Crops (negative pads) keep at least nothing; positive pads then pad what is left,
          // within ONNX's limits for the mode (reflect: <= left - 1).
          int64_t b = rng.integer(-shape[d] / 2, shape[d] + 1);
          int64_t e = rng.integer(-(shape[d] - shape[d] / 2), shape[d] + 1);
          if (m == 0 && trial == 2 && d == 0) b = -shape[d] - 2, e = 3;  // over-cropped: all constant
          const int64_t kept = shape[d] - std::max<int64_t>(-b, 0) - std::max<int64_t>(-e, 0);
          const int64_t limit = modes[m] == kernels::PadMode::Reflect ? kept - 1 : kept > 0 ? INT64_MAX : 0;
          if (m != 0)
            b = std::min(b, std::max<int64_t>(limit, 0)), e = std::min(e, std::max<int64_t>(limit, 0));
          pads[d] = b;
          pads[d + rank] = e;
          crop_begin[d] = std::max<int64_t>(-b, 0);
          pad_begin[d] = std::max<int64_t>(b, 0);
          left[d] = std::max<int64_t>(kept, 0);
        }
        const Shape out_shape = kernels::pad_output_shape(shape, pads);
        const double value = dtype == DType::boolean ? 1.0
                             : dtype == DType::u8    ? 200.0
                                                     : -3.5 + (is_float(dtype) ? 0 : 0.5);
        const HostTensor in = random_host(rng, dtype, shape);
        const HostTensor expected = reference_gather(
            in, out_shape,
            [&](const std::vector<int64_t>& c) {
              std::vector<int64_t> ic(rank);
              for (size_t d = 0; d < rank; ++d) {
                // ONNX reference: crop first, then pad the cropped input.
                const int64_t x = left[d] == 0 ? -1 : pad_source(c[d] - pad_begin[d], left[d], modes[m]);
                if (x < 0) return int64_t{-1};
                ic[d] = crop_begin[d] + x;
              }
              return flat_index(shape, ic);
            },
            host_value(dtype, value));
        const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
        EXPECT_EQ(run_and_compare(rng, expected,
                                  [&](gpu::CommandRecorder& r, const Tensor& out) {
                                    kernels::record_pad(layout_kc(), r, input, pads, modes[m], value, out);
                                  }),
                  0)
            << "Pad " << names[m] << " " << dtype_label(dtype) << " " << shape_string(shape) << " pads ["
            << fmt::format("{}", fmt::join(pads, ",")) << "]";
        ++cases;
      }
    }
  }
  std::printf("Pad: %d random cases checked byte for byte\n", cases);
}

TEST(LayoutPad, RejectsWhatOnnxRejects) {
  Random rng(test_seed());
  const Tensor input = upload_view(rng, random_host(rng, DType::f32, {2, 5}), 0);
  gpu::CommandRecorder r(gpu().context);
  // Reflect by more than length - 1, after a crop of the other side.
  const std::vector<int64_t> too_far = {0, 3, 0, -2};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, too_far, kernels::PadMode::Reflect, 0.0,
                                   poisoned(DType::f32, {2, 6})),
               std::invalid_argument);
  // Edge-padding a dim cropped to nothing.
  const std::vector<int64_t> nothing_left = {0, -5, 0, 2};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, nothing_left, kernels::PadMode::Edge, 0.0,
                                   poisoned(DType::f32, {2, 2})),
               std::invalid_argument);
  // A wrong output shape.
  const std::vector<int64_t> pads = {1, 1, 1, 1};
  EXPECT_THROW(kernels::record_pad(layout_kc(), r, input, pads, kernels::PadMode::Constant, 0.0,
                                   poisoned(DType::f32, {4, 5})),
               std::invalid_argument);
}

TEST(LayoutPad, ReflectOfAudioFrame) {
  // STFT centring as the models do it: reflect n_fft/2 on both sides of [1, 2, T].
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    const Shape shape = {1, 2, 3001};
    const std::vector<int64_t> pads = {0, 0, 256, 0, 0, 255};
    const HostTensor in = random_host(rng, dtype, shape);
    const Shape out_shape = kernels::pad_output_shape(shape, pads);
    const HostTensor expected = reference_gather(in, out_shape, [&](const std::vector<int64_t>& c) {
      return flat_index(shape, {c[0], c[1], pad_source(c[2] - 256, 3001, kernels::PadMode::Reflect)});
    });
    const Tensor input = upload_view(rng, in, 0);
    EXPECT_EQ(run_and_compare(rng, expected,
                              [&](gpu::CommandRecorder& r, const Tensor& out) {
                                kernels::record_pad(layout_kc(), r, input, pads, kernels::PadMode::Reflect,
                                                    0.0, out);
                              }),
              0);
  }
}

}  // namespace
}  // namespace onda::test

namespace onda::test {
namespace {

TEST(LayoutEdgeCases, ScalarsAndEmptyTensors) {
  Random rng(test_seed());
  for (DType dtype : {DType::f32, DType::f16}) {
    // A scalar through Transpose, Expand and Slice-of-nothing.
    const HostTensor scalar = random_host(rng, dtype, {});
    const Tensor s = upload_view(rng, scalar, 0);
    OutputView t = poisoned_view(dtype, {}, random_offset(rng, dtype));
    OutputView e = poisoned_view(dtype, {3, 1, 5}, random_offset(rng, dtype));
    gpu::CommandRecorder r(gpu().context);
    kernels::record_transpose(layout_kc(), r, s, {}, t.view);
    kernels::record_expand(layout_kc(), r, s, e.view);
    // Empty outputs record nothing and leave the poison.
    const HostTensor empty_in = random_host(rng, dtype, {0, 4});
    const Tensor empty = upload_view(rng, empty_in, 0);
    OutputView empty_out = poisoned_view(dtype, {4, 0}, 0);
    kernels::record_transpose(layout_kc(), r, empty, std::vector<int64_t>{1, 0}, empty_out.view);
    const auto dims = kernels::plan_slice({0, 4}, std::vector<int64_t>{-1}, std::vector<int64_t>{INT64_MIN},
                                          std::vector<int64_t>{0}, std::vector<int64_t>{-1});
    EXPECT_EQ(kernels::slice_output_shape(dims), (Shape{0, 4}));
    kernels::record_slice(layout_kc(), r, empty, dims, poisoned(dtype, {0, 4}));
    r.submit_and_wait();
    EXPECT_EQ(count_mismatches(t, scalar), 0);
    EXPECT_EQ(count_mismatches(e, reference_gather(scalar, {3, 1, 5},
                                                   [](const std::vector<int64_t>&) { return int64_t{0}; })),
              0);
    EXPECT_EQ(count_mismatches(empty_out, HostTensor{dtype, {4, 0}, {}}), 0);
  }
}

TEST(LayoutEdgeCases, CopyBetweenViewsEveryDtype) {
  Random rng(test_seed());
  for (DType dtype : all_dtypes()) {
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{7}, Shape{3, 5, 2}}) {
      const HostTensor in = random_host(rng, dtype, shape);
      const Tensor input = upload_view(rng, in, random_offset(rng, dtype));
      EXPECT_EQ(run_and_compare(rng, in,
                                [&](gpu::CommandRecorder& r, const Tensor& out) {
                                  kernels::record_copy(layout_kc(), r, input, out);
                                }),
                0)
          << dtype_name(dtype) << " " << shape_string(shape);
    }
  }
}

TEST(LayoutEdgeCases, MoreThan65535WorkgroupsSplitOverY) {
  // f16 Expand: one invocation per output word, 16.8M words > 65535 * 256, so the dispatch uses
  // a 2-D workgroup grid.
  Random rng(test_seed());
  const Shape in_shape = {1, 8192}, out_shape = {4100, 8192};
  const HostTensor in = random_host(rng, DType::f16, in_shape);
  const Tensor input = upload_view(rng, in, 2);
  OutputView out = poisoned_view(DType::f16, out_shape, 2);
  gpu::CommandRecorder r(gpu().context);
  kernels::record_expand(layout_kc(), r, input, out.view);
  r.submit_and_wait();
  const HostTensor expected =
      reference_gather(in, out_shape, [](const std::vector<int64_t>& c) { return c[1]; });
  EXPECT_EQ(count_mismatches(out, expected), 0);
}

}  // namespace
}  // namespace onda::test
