// The reference models' graphs for the fusion passes' structure tests: loaded with their weights
// file zero-filled to the recipe's size (shared/models holds the graphs and recipes, not weights).
#pragma once
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "graph/fusion_passes.h"
#include "graph/graph.h"
#include "graph/simplify.h"
#include "onnx/onnx_loader.h"
#include "test_onnx_support.h"

namespace onda::test {

// Model `name` of `models` (reference_models_dir()) as loaded, its weights zeros, the files written
// into `folder`; nullopt when the model is not there.
inline std::optional<Graph> zero_weight_reference_graph(const fs::path& models, const std::string& name,
                                                        const TemporaryFolder& folder) {
  const fs::path onnx_file = models / (name + ".onnx");
  if (!fs::exists(onnx_file)) return std::nullopt;
  const nlohmann::json recipe = nlohmann::json::parse(read_file_bytes(models / (name + ".recipe.json")));
  fs::copy_file(onnx_file, folder.path() / onnx_file.filename(), fs::copy_options::overwrite_existing);
  const fs::path weights = folder.path() / recipe["weights"].get<std::string>();
  write_file(weights, "");
  fs::resize_file(weights, recipe["total_bytes"].get<uint64_t>());
  return load_onnx_model(folder.path() / onnx_file.filename());
}

// The same graph after the session's plan steps for it (simplify_graph with its own input shapes,
// then run_fusion_passes, as Session::Impl::simplified_for); nullopt when the model is not there.
inline std::optional<Graph> fused_reference_graph(const fs::path& models, const std::string& name,
                                                  const TemporaryFolder& folder) {
  std::optional<Graph> graph = zero_weight_reference_graph(models, name, folder);
  if (!graph) return std::nullopt;
  simplify_graph(*graph, {});
  run_fusion_passes(*graph);
  return graph;
}

}  // namespace onda::test
