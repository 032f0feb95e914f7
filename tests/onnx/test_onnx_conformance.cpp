// ONNX's own backend node tests (Debian's libonnx-testdata) through the public Session API: every
// test whose ops onda claims runs on the GPU and must match the expected outputs (rel L2 <= 1e-5
// for floats, 1e-3 for float16, exact for integers and bools). Tests with an op onda does not
// claim are counted as skipped, so this file grows with the registry.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "graph/model_error.h"
#include "graph/op_coverage.h"
#include "onda/session.h"
#include "onnx/onnx_loader.h"
#include "ops/op_registry.h"

namespace onda::test {
namespace {

const std::filesystem::path kNodeTests = "/usr/share/libonnx-testdata/data/node";

// Conformance cases that test behaviour onda deliberately does not have, with the reason.
// Every excluded case still fails with a ModelError naming the node and what is unsupported.
const std::map<std::string, std::string> kExcluded = {
    {"test_maxpool_2d_uint8", "pools on uint8 are not implemented (float only)"},
    {"test_maxpool_3d_default", "3-D pools are not implemented"},
    {"test_averagepool_3d_default", "3-D pools are not implemented"},
    {"test_if", "If whose condition is computed from input values (onda inlines If only when the condition folds "
                "from constants and shapes)"},
    {"test_maxpool_with_argmax_2d_precomputed_pads", "MaxPool's Indices output is not implemented"},
    {"test_maxpool_with_argmax_2d_precomputed_strides", "MaxPool's Indices output is not implemented"},
    {"test_resize_downsample_scales_cubic", "cubic Resize is not implemented"},
    {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "cubic Resize is not implemented"},
    {"test_resize_downsample_scales_cubic_align_corners", "cubic Resize is not implemented"},
    {"test_resize_downsample_sizes_cubic", "cubic Resize is not implemented"},
    {"test_resize_upsample_scales_cubic", "cubic Resize is not implemented"},
    {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "cubic Resize is not implemented"},
    {"test_resize_upsample_scales_cubic_align_corners", "cubic Resize is not implemented"},
    {"test_resize_upsample_scales_cubic_asymmetric", "cubic Resize is not implemented"},
    {"test_resize_upsample_sizes_cubic", "cubic Resize is not implemented"},
    {"test_resize_tf_crop_and_resize", "tf_crop_and_resize coordinates are not implemented"},
    {"test_scatternd_add", "ScatterND reductions are not implemented"},
    {"test_scatternd_multiply", "ScatterND reductions are not implemented"},
    {"test_batchnorm_epsilon_training_mode", "training mode (running statistics): onda is an inference engine"},
    {"test_batchnorm_example_training_mode", "training mode (running statistics): onda is an inference engine"},
    {"test_training_dropout", "training-mode Dropout draws a random mask: onda is an inference engine"},
    {"test_training_dropout_default", "training-mode Dropout draws a random mask: onda is an inference engine"},
    {"test_training_dropout_default_mask", "training-mode Dropout draws a random mask: onda is an inference engine"},
    {"test_training_dropout_mask", "training-mode Dropout draws a random mask: onda is an inference engine"},
};

// Folders whose expected outputs are another generator's random draws (numpy's), which onda's
// Philox generator cannot reproduce: the random ops are checked by statistics instead
// (tests/ops/test_random_ops.cpp, tests/kernels/random/test_random.cpp).
const std::set<std::string> kRandomValues = {
    "test_bernoulli",          "test_bernoulli_double", "test_bernoulli_double_expanded",
    "test_bernoulli_expanded", "test_bernoulli_seed",   "test_bernoulli_seed_expanded",
};

// Cases whose expected data is itself inexact: ONNX 1.12's window tests were generated with a
// float32 angle and are off the exact window by ~6e-5 rel L2 (onda matches the float64 formula,
// e.g. hann(10)[1] = 0.0954915 vs the file's 0.0954861); bounded loosely instead of skipped.
const std::map<std::string, double> kLooseBounds = {
    {"test_blackmanwindow_expanded", 2e-4},  {"test_blackmanwindow_symmetric_expanded", 2e-4},
    {"test_hammingwindow_expanded", 2e-4},   {"test_hammingwindow_symmetric_expanded", 2e-4},
    {"test_hannwindow_expanded", 2e-4},      {"test_hannwindow_symmetric_expanded", 2e-4},
    {"test_blackmanwindow", 2e-4},           {"test_blackmanwindow_symmetric", 2e-4},
    {"test_hammingwindow", 2e-4},            {"test_hammingwindow_symmetric", 2e-4},
    {"test_hannwindow", 2e-4},               {"test_hannwindow_symmetric", 2e-4},
    // The expected values are written to 4 decimals (-0.1406 for the exact -0.140625 = -9/64).
    {"test_gridsample_bicubic", 1e-4},
};

double compare(const HostTensor& got, const HostTensor& want, std::string* why) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    *why = fmt::format("got {} {}, want {} {}", dtype_name(got.dtype()), shape_to_string(got.shape()),
                       dtype_name(want.dtype()), shape_to_string(want.shape()));
    return INFINITY;
  }
  if (!is_float(want.dtype())) return got.to_int64() == want.to_int64() ? 0.0 : INFINITY;
  const auto g = got.to_double(), w = want.to_double();
  double num = 0, den = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      if (!std::isnan(g[i])) return INFINITY;
      continue;
    }
    if (std::isinf(w[i])) {
      if (g[i] != w[i]) return INFINITY;
      continue;
    }
    if (!std::isfinite(g[i])) return INFINITY;
    num += (g[i] - w[i]) * (g[i] - w[i]);
    den += w[i] * w[i];
  }
  return den == 0 ? (num == 0 ? 0 : std::sqrt(num)) : std::sqrt(num / den);
}

TEST(OnnxConformance, NodeTestsOfClaimedOps) {
  if (!std::filesystem::exists(kNodeTests)) GTEST_SKIP() << "libonnx-testdata not installed";
  std::vector<std::filesystem::path> dirs;
  for (const auto& entry : std::filesystem::directory_iterator(kNodeTests)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  int ran = 0, skipped = 0;
  std::vector<std::string> failures;
  for (const auto& dir : dirs) {
    const std::string name = dir.filename().string();
    if (kExcluded.count(name) || kRandomValues.count(name) || !std::filesystem::exists(dir / "model.onnx"))
      continue;
    Graph graph;
    try {
      graph = load_onnx_model(dir / "model.onnx");
    } catch (const ModelError&) {
      ++skipped;  // old IR or an unsupported type: the loader's own tests cover these
      continue;
    }
    auto unsupported = find_unsupported_ops(graph, [](std::string_view domain, std::string_view op, int64_t opset) {
      return ops::find_op(domain, op, opset) != nullptr;
    });
    if (!unsupported.empty()) {
      ++skipped;
      continue;
    }
    ++ran;
    try {
      auto session = Session::open(dir / "model.onnx");
      const auto data = dir / "test_data_set_0";
      std::map<std::string, HostTensor> inputs;
      for (size_t i = 0; i < session->inputs().size(); ++i) {
        inputs[session->inputs()[i].name] = read_tensor_proto_file(data / fmt::format("input_{}.pb", i));
      }
      auto outputs = session->run(inputs);
      for (size_t i = 0; i < session->outputs().size(); ++i) {
        const auto path = data / fmt::format("output_{}.pb", i);
        if (!std::filesystem::exists(path)) continue;
        const HostTensor want = read_tensor_proto_file(path);
        std::string why;
        const double e = compare(outputs.at(session->outputs()[i].name), want, &why);
        double bound = want.dtype() == DType::f16 ? 1e-3 : 1e-5;
        if (auto loose = kLooseBounds.find(name); loose != kLooseBounds.end()) bound = loose->second;
        if (!(e <= bound)) failures.push_back(fmt::format("{} output {}: rel L2 {:.2e} {}", name, i, e, why));
      }
    } catch (const std::exception& e) {
      failures.push_back(fmt::format("{}: {}", name, e.what()));
    }
  }
  std::printf("ONNX node tests: %d ran, %zu failed, %d skipped (ops not claimed or not loadable)\n", ran,
              failures.size(), skipped);
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_GT(ran, 100);
}

}  // namespace
}  // namespace onda::test
