#include "graph/split_gemm_columns.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "graph/fuse_attention.h"

namespace onda {
namespace {

// The constant int64 values of an input, if it is a constant.
std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, const Node& node, size_t input) {
  if (input >= node.inputs.size() || node.inputs[input].empty()) return std::nullopt;
  const HostTensor* t = graph.find_initializer(node.inputs[input]);
  if (!t) return std::nullopt;
  return t->to_int64();
}

// [begin, end) of the last axis (of length n) that a Slice (opset 10+: inputs) keeps, if it slices
// only that axis with step 1.
std::optional<std::pair<int64_t, int64_t>> last_axis_range(const Graph& graph, const Node& slice, int64_t rank,
                                                           int64_t n) {
  if (slice.inputs.size() < 3) return std::nullopt;
  const auto starts = constant_ints(graph, slice, 1), ends = constant_ints(graph, slice, 2);
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1) return std::nullopt;
  int64_t axis = 0;
  if (const auto axes = constant_ints(graph, slice, 3)) {
    if (axes->size() != 1) return std::nullopt;
    axis = (*axes)[0] < 0 ? (*axes)[0] + rank : (*axes)[0];
  }
  if (axis != rank - 1) return std::nullopt;
  if (slice.inputs.size() > 4 && !slice.inputs[4].empty()) {
    const auto steps = constant_ints(graph, slice, 4);
    if (!steps || steps->size() != 1 || (*steps)[0] != 1) return std::nullopt;
  }
  auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  return std::make_pair(clamp((*starts)[0]), clamp((*ends)[0]));
}

// The parts' output names in column order when `readers` (every reader of y, [.., n] of rank
// `rank`) split its last axis into equal consecutive parts; empty otherwise.
std::vector<std::string> column_parts(const Graph& graph, const std::vector<size_t>& readers, int64_t rank,
                                      int64_t n) {
  if (readers.size() == 1 && is_onnx_op(graph.nodes[readers[0]], "Split")) {
    const Node& split = graph.nodes[readers[0]];
    int64_t axis = split.attribute_int("axis", 0);
    if (axis < 0) axis += rank;
    const size_t count = split.outputs.size();
    if (axis != rank - 1 || count < 2 || n % static_cast<int64_t>(count) != 0) return {};
    std::optional<std::vector<int64_t>> sizes = constant_ints(graph, split, 1);
    if (!sizes && split.has_attribute("split")) sizes = split.attribute_ints("split");
    if (sizes && (sizes->size() != count ||
                  std::any_of(sizes->begin(), sizes->end(),
                              [&](int64_t s) { return s != n / static_cast<int64_t>(count); })))
      return {};
    if (!sizes && split.inputs.size() > 1 && !split.inputs[1].empty()) return {};  // sizes known at run time
    for (const std::string& out : split.outputs)
      if (out.empty()) return {};
    return split.outputs;
  }
  std::vector<std::pair<int64_t, std::string>> ranges;
  int64_t width = 0;
  for (size_t r : readers) {
    const Node& slice = graph.nodes[r];
    if (!is_onnx_op(slice, "Slice") || slice.outputs.size() != 1) return {};
    const auto range = last_axis_range(graph, slice, rank, n);
    if (!range || range->second <= range->first) return {};
    if (width == 0) width = range->second - range->first;
    if (range->second - range->first != width) return {};
    ranges.emplace_back(range->first, slice.outputs[0]);
  }
  std::sort(ranges.begin(), ranges.end());
  if (ranges.size() < 2 || width * static_cast<int64_t>(ranges.size()) != n) return {};
  std::vector<std::string> outputs;
  for (size_t k = 0; k < ranges.size(); ++k) {
    if (ranges[k].first != static_cast<int64_t>(k) * width) return {};
    outputs.push_back(ranges[k].second);
  }
  return outputs;
}

}  // namespace

size_t split_gemm_columns(Graph& graph) {
  // Every reader of each value (a node reading it twice counted once).
  std::unordered_map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    std::vector<std::string> read = values_read_by(graph.nodes[i]);
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    for (const std::string& name : read) readers[name].push_back(i);
  }
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t rewritten = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& gemm = graph.nodes[i];
    if (!is_static_matrix_product(graph, gemm)) continue;
    if (gemm.outputs.size() != 1 || gemm.has_attribute(kColumnPartsAttribute)) continue;
    const std::string y = gemm.outputs[0];
    if (y.empty() || std::find(graph.outputs.begin(), graph.outputs.end(), y) != graph.outputs.end()) continue;
    const std::optional<Shape> shape = static_shape_of(graph, y);
    const auto it = readers.find(y);
    if (!shape || shape->size() < 2 || it == readers.end()) continue;
    const int64_t rank = static_cast<int64_t>(shape->size()), n = shape->back();
    // Column parts take the tiled path: leave the products the GEMM runs on its skinny path (up to 64
    // rows or columns, kernels/gemm/gemm.cpp). BS-RoFormer's [801 x 2048] x [2048 x 16] band outputs
    // ran 0.039 ms skinny and 0.136 ms tiled in parts on an H100 (2026-12-07).
    if (n <= 64 || shape_numel(*shape) / n <= 64) continue;
    const std::vector<std::string> parts = column_parts(graph, it->second, rank, n);
    if (parts.empty() || (n / static_cast<int64_t>(parts.size())) % 4 != 0) continue;
    for (size_t r : it->second) removed[r] = true;
    gemm.outputs = parts;
    gemm.set_attribute(kColumnPartsAttribute, static_cast<int64_t>(parts.size()));
    graph.values.erase(y);
    ++rewritten;
  }
  erase_marked_nodes(graph, removed);
  return rewritten;
}

}  // namespace onda
