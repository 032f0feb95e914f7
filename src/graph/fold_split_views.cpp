#include "graph/fold_split_views.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_rotate_half.h"

namespace onda {
namespace {

// A standalone elementwise group that reads `value` plainly (not with its pairs rotated).
bool is_plain_reader(const Node& node, const std::string& value) {
  if (node.domain != kOndaDomain || node.op_type != kFusedElementwiseOp || node.outputs.size() != 1) return false;
  for (const int64_t k : node.attribute_ints(kRotatedInputsAttribute, {}))
    if (k >= 0 && k < static_cast<int64_t>(node.inputs.size()) && node.inputs[k] == value) return false;
  return true;
}

}  // namespace

size_t fold_splits_into_elementwise(Graph& graph) {
  // Every reader of each value, by position (a group may read a part more than once).
  std::unordered_map<std::string, std::vector<size_t>> readers;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const std::string& name : values_read_by(graph.nodes[i])) readers[name].push_back(i);
  std::vector<bool> removed(graph.nodes.size(), false);
  size_t folded = 0;
  for (size_t s = 0; s < graph.nodes.size(); ++s) {
    const Node& split = graph.nodes[s];
    if (!is_onnx_op(split, "Split") || split.inputs.empty() || split.outputs.empty()) continue;
    const std::optional<Shape> source = static_shape_of(graph, split.inputs[0]);
    if (!source || source->empty()) continue;
    int64_t axis = split.attribute_int("axis", 0);
    if (axis < 0) axis += static_cast<int64_t>(source->size());
    if (axis < 0 || axis >= static_cast<int64_t>(source->size())) continue;
    // Each part: its extent along the axis (from its static shape), and every reader a standalone group.
    bool foldable = true;
    std::vector<int64_t> starts;
    int64_t start = 0;
    for (const std::string& part : split.outputs) {
      starts.push_back(start);
      if (part.empty()) {
        foldable = false;  // an omitted part: its extent is not known from a shape
        break;
      }
      const std::optional<Shape> shape = static_shape_of(graph, part);
      const bool graph_output = std::find(graph.outputs.begin(), graph.outputs.end(), part) != graph.outputs.end();
      const auto r = readers.find(part);
      foldable = shape && shape->size() == source->size() && !graph_output && r != readers.end() &&
                 std::all_of(r->second.begin(), r->second.end(),
                             [&](size_t n) { return is_plain_reader(graph.nodes[n], part) && !removed[n]; });
      if (!foldable) break;
      for (size_t d = 0; d < source->size(); ++d)
        foldable = foldable && (static_cast<int64_t>(d) == axis || (*shape)[d] == (*source)[d]);
      if (!foldable) break;
      start += (*shape)[axis];
    }
    if (!foldable || start != (*source)[axis]) continue;
    for (size_t j = 0; j < split.outputs.size(); ++j) {
      const std::string part = split.outputs[j];
      const int64_t length = (*static_shape_of(graph, part))[axis];
      for (const size_t n : readers[part]) {
        Node& group = graph.nodes[n];
        std::vector<int64_t> views = group.attribute_ints(kInputViewsAttribute, {});
        for (size_t k = 0; k < group.inputs.size(); ++k) {
          if (group.inputs[k] != part) continue;
          group.inputs[k] = split.inputs[0];
          views.insert(views.end(), {static_cast<int64_t>(k), axis, starts[j], length});
        }
        group.set_attribute(kInputViewsAttribute, std::move(views));
        readers[split.inputs[0]].push_back(n);
      }
      graph.values.erase(part);
    }
    removed[s] = true;
    ++folded;
  }
  erase_marked_nodes(graph, removed);
  return folded;
}

}  // namespace onda
