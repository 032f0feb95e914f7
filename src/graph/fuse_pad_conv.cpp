#include "graph/fuse_pad_conv.h"

#include <optional>
#include <string>
#include <vector>

namespace onda {
namespace {

// The Pad's amounts as [begin of each axis..., end of each axis...] over all `rank` axes, or
// nullopt when the Pad is not a plan-time constant zero padding (opset < 11: attributes; 11+: the
// pads / constant_value / axes inputs, which must be initializers).
std::optional<std::vector<int64_t>> zero_pads(const Graph& graph, const Node& pad, size_t rank) {
  if (pad.attribute_string("mode", "constant") != "constant" || pad.outputs.size() != 1) return std::nullopt;
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;
  if (graph.opset_version("") < 11) {
    if (pad.attribute_float("value", 0.0f) != 0.0f) return std::nullopt;
    pads = pad.attribute_ints("pads", {});
  } else {
    if (pad.inputs.size() < 2 || pad.inputs[1].empty()) return std::nullopt;
    const HostTensor* amounts = graph.find_initializer(pad.inputs[1]);
    if (!amounts) return std::nullopt;
    pads = amounts->to_int64();
    if (pad.inputs.size() > 2 && !pad.inputs[2].empty()) {
      const HostTensor* value = graph.find_initializer(pad.inputs[2]);
      if (!value || value->numel() != 1 || value->to_double()[0] != 0.0) return std::nullopt;
    }
    if (pad.inputs.size() > 3 && !pad.inputs[3].empty()) {
      const HostTensor* listed = graph.find_initializer(pad.inputs[3]);
      if (!listed) return std::nullopt;
      axes = listed->to_int64();
    }
  }
  if (axes.empty()) {
    for (size_t a = 0; a < rank; ++a) axes.push_back(static_cast<int64_t>(a));
  }
  if (pads.size() != 2 * axes.size()) return std::nullopt;
  std::vector<int64_t> all(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + static_cast<int64_t>(rank) : axes[i];
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) return std::nullopt;
    const int64_t begin = pads[i], end = pads[i + axes.size()];
    if (begin < 0 || end < 0) return std::nullopt;  // a crop is not padding
    all[static_cast<size_t>(axis)] += begin;
    all[rank + static_cast<size_t>(axis)] += end;
  }
  // N and C must stay as they are: the convolution pads its spatial axes only.
  if (all[0] != 0 || all[1] != 0 || all[rank] != 0 || all[rank + 1] != 0) return std::nullopt;
  return all;
}

// The Conv nodes reading `value`, when they are all its reads and each reads it as X only.
std::optional<std::vector<size_t>> conv_readers(const Graph& graph, const ValueUses& uses, const std::string& value) {
  const int reads = uses.reads(value);
  if (reads == 0) return std::nullopt;
  std::vector<size_t> convs;
  int conv_reads = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = graph.nodes[i];
    bool reads_it = false;
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      if (node.inputs[k] != value) continue;
      if (k != 0 || !is_onnx_op(node, "Conv")) return std::nullopt;
      reads_it = true;
      ++conv_reads;
    }
    if (reads_it) convs.push_back(i);
  }
  // Reads beyond the Convs' (a graph output, a subgraph) keep the Pad.
  if (convs.empty() || conv_reads != reads) return std::nullopt;
  for (size_t i : convs) {
    const Node& conv = graph.nodes[i];
    if (conv.attribute_string("auto_pad", "NOTSET") != "NOTSET") return std::nullopt;
  }
  return convs;
}

}  // namespace

size_t fuse_pad_into_conv(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& pad = graph.nodes[i];
    if (!is_onnx_op(pad, "Pad") || pad.inputs.empty() || pad.inputs[0].empty() || pad.outputs.size() != 1)
      continue;
    const std::optional<Shape> shape = static_shape_of(graph, pad.inputs[0]);
    if (!shape || shape->size() < 3) continue;
    const size_t rank = shape->size(), spatial = rank - 2;
    const std::optional<std::vector<int64_t>> amounts = zero_pads(graph, pad, rank);
    if (!amounts) continue;
    const std::optional<std::vector<size_t>> convs = conv_readers(graph, uses, pad.outputs[0]);
    if (!convs) continue;
    bool fits = true;
    for (size_t c : *convs) {
      const std::vector<int64_t> own = graph.nodes[c].attribute_ints("pads", {});
      fits = fits && (own.empty() || own.size() == 2 * spatial);
    }
    if (!fits) continue;
    for (size_t c : *convs) {
      Node& conv = graph.nodes[c];
      std::vector<int64_t> pads = conv.attribute_ints("pads", std::vector<int64_t>(2 * spatial, 0));
      for (size_t d = 0; d < spatial; ++d) {
        pads[d] += (*amounts)[2 + d];
        pads[spatial + d] += (*amounts)[rank + 2 + d];
      }
      conv.set_attribute("pads", std::move(pads));
      conv.inputs[0] = pad.inputs[0];
    }
    graph.values.erase(pad.outputs[0]);
    removed[i] = true;
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

}  // namespace onda
