#include "graph/fuse_norm_prelu.h"

#include <optional>
#include <string>
#include <vector>

#include "graph/broadcast.h"
#include "graph/fuse_epilogue.h"
#include "graph/fuse_group_norm.h"

namespace onda {

size_t fuse_norm_prelu(Graph& graph) {
  const ValueUses uses = value_uses(graph);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t fused = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& prelu = graph.nodes[i];
    if (!is_onnx_op(prelu, "PRelu") || prelu.inputs.size() != 2 || prelu.outputs.size() != 1 ||
        prelu.inputs[0].empty())
      continue;
    const std::optional<size_t> p = producer_read_once(uses, prelu.inputs[0]);
    if (!p) continue;
    Node& norm = graph.nodes[*p];
    // The normalization indexes its affine parameters per channel (a fused GroupNorm's too), and
    // applies nothing at its store yet: the slope goes before any epilogue.
    if (!is_onnx_op(norm, "InstanceNormalization") || norm.outputs.size() != 1 || norm.inputs.size() != 3 ||
        norm.has_attribute(kFusedPreluAttribute) || norm.has_attribute(kFusedEpilogueAttribute))
      continue;
    const std::optional<Shape> x_shape = static_shape_of(graph, norm.inputs[0]);
    const HostTensor* slope = graph.find_initializer(prelu.inputs[1]);
    if (!x_shape || x_shape->size() < 3 || !slope) continue;
    const std::optional<std::vector<double>> per_channel = per_channel_values(*slope, *x_shape);
    if (!per_channel) continue;
    const std::string slope_name = norm.outputs[0] + "/onda_prelu_slope";
    graph.set_initializer(slope_name, HostTensor::from_double(slope->dtype(), {(*x_shape)[1]}, *per_channel));
    norm.inputs.push_back(slope_name);
    norm.set_attribute(kFusedPreluAttribute, int64_t{1});
    graph.values.erase(norm.outputs[0]);
    norm.outputs[0] = prelu.outputs[0];
    removed[i] = true;
    ++fused;
  }
  erase_marked_nodes(graph, removed);
  return fused;
}

}  // namespace onda
