// Every Conv / ConvTranspose node of the four reference models (shared/models, loaded with a sparse
// zero weights file): its attributes and weight resolve into a geometry on a synthetic input, and
// the nodes' shape classes and the paths `automatic` takes are printed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "kernels/conv/conv.h"
#include "onnx/onnx_loader.h"
#include "ops/onnx_vocabulary.h"
#include "test_onnx_support.h"

namespace onda::test {
namespace {

using namespace kernels::conv;

ConvAttributes node_attributes(const Node& node) {
  ConvAttributes a;
  a.auto_pad = ops::conv_auto_pad_from_onnx(node.attribute_string("auto_pad", "NOTSET"));
  a.kernel_shape = node.attribute_ints("kernel_shape", {});
  a.strides = node.attribute_ints("strides", {});
  a.dilations = node.attribute_ints("dilations", {});
  a.pads = node.attribute_ints("pads", {});
  a.group = node.attribute_int("group", 1);
  a.output_padding = node.attribute_ints("output_padding", {});
  a.output_shape = node.attribute_ints("output_shape", {});
  return a;
}

TEST(ConvModels, ReferenceModelNodesResolve) {
  const std::optional<fs::path> models = reference_models_dir();
  if (!models) GTEST_SKIP() << "reference models not found (set ONDA_MODELS_DIR)";
  TemporaryFolder folder;
  for (const char* name : {"htdemucs6", "scnetlargestarrytong", "vr_hp_wind_inst", "mpsenet"}) {
    const auto recipe =
        nlohmann::json::parse(read_file_bytes(*models / (std::string(name) + ".recipe.json")));
    fs::copy_file(*models / (std::string(name) + ".onnx"), folder.path() / (std::string(name) + ".onnx"));
    const fs::path weights = folder.path() / recipe["weights"].get<std::string>();
    write_file(weights, "");
    fs::resize_file(weights, recipe["total_bytes"].get<uint64_t>());
    const Graph graph = load_onnx_model(folder.path() / (std::string(name) + ".onnx"));
    std::map<std::string, int> classes;
    int nodes = 0, resolved = 0;
    int paths[4] = {};
    std::map<std::string, int> direct_weights;
    for (const Node& node : graph.nodes) {
      if (node.op_type != "Conv" && node.op_type != "ConvTranspose") continue;
      ++nodes;
      const bool transpose = node.op_type == "ConvTranspose";
      const HostTensor* w = graph.find_initializer(node.inputs.at(1));
      ASSERT_NE(w, nullptr) << node.describe() << ": weight is not an initializer";
      const ConvAttributes a = node_attributes(node);
      if (!transpose) {
        EXPECT_TRUE(a.output_padding.empty() && a.output_shape.empty()) << node.describe();
      }
      const int64_t rank = w->rank() - 2;
      std::string cls = fmt::format("{} {}-D group={} kernel={} auto_pad={}", node.op_type, rank, a.group,
                                    fmt::join(Shape(w->shape().begin() + 2, w->shape().end()), "x"),
                                    auto_pad_name(a.auto_pad));
      if (transpose && w->rank() == 3 && w->shape()[1] == 1 && w->shape()[0] == w->shape()[2]) {
        cls += fmt::format(" [n,1,n] weight ({} elements, {})", w->numel(),
                           w->numel() > 65536 ? "on the GPU in a Session" : "on the host");
      }
      ++classes[cls];
      // The export records no intermediate shapes: resolve with a synthetic input of 64 positions
      // per spatial dimension (or the dilated kernel, if longer).
      Shape x_shape = {1, transpose ? w->shape()[0] : w->shape()[1] * a.group};
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t dilation = a.dilations.empty() ? 1 : a.dilations[d];
        x_shape.push_back(std::max<int64_t>(64, (w->shape()[2 + d] - 1) * dilation + 1));
      }
      ConvGeometry g;
      ASSERT_NO_THROW(g = transpose ? resolve_conv_transpose(x_shape, w->shape(), a)
                                    : resolve_conv(x_shape, w->shape(), a))
          << node.describe();
      EXPECT_EQ(g.weight_shape(), w->shape()) << node.describe();
      ++resolved;
      const ConvPath path = choose_conv_path(g, transpose && w->rank() == 3 && w->shape()[1] == 1);
      ++paths[static_cast<int>(path)];
      if (path == ConvPath::direct)
        ++direct_weights[shape_string(w->shape()) + (a.group > 1 ? fmt::format(" group {}", a.group) : "")];
    }
    std::printf("%s: %d conv nodes, %d resolved on a 64-position input: %d direct, %d gemm, %d overlap-add\n",
                name, nodes, resolved, paths[1], paths[2], paths[3]);
    for (const auto& [cls, count] : classes) std::printf("  %3d x %s\n", count, cls.c_str());
    std::string direct;
    for (const auto& [weight, count] : direct_weights) direct += fmt::format(" {}x{}", count, weight);
    std::printf("  direct path weights:%s\n", direct.c_str());
  }
}

}  // namespace
}  // namespace onda::test
