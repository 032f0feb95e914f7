// ONNX NonMaxSuppression: per batch and class, boxes taken greedily by descending score (ties: the
// lower index first), each kept unless its IoU with a box already kept exceeds iou_threshold, at
// most max_output_boxes_per_class of them, only boxes scoring above score_threshold. The output
// [selected, 3] (batch, class, box) has a value-dependent size and the selection is sequential:
// boxes and scores are read back mid-run (ops::OpContext::read_back) and the selection runs on the
// host, as ONNX's reference implementation does it (op_non_max_suppression.py).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <numeric>

#include "graph/model_error.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

using Box = std::array<double, 4>;

// [x_min, x_max, y_min, y_max] of a box as given: corners (y1, x1, y2, x2) in any order, or
// (x_center, y_center, width, height).
std::array<double, 4> extent(const Box& b, bool center_point_box) {
  if (center_point_box) return {b[0] - b[2] / 2, b[0] + b[2] / 2, b[1] - b[3] / 2, b[1] + b[3] / 2};
  return {std::min(b[1], b[3]), std::max(b[1], b[3]), std::min(b[0], b[2]), std::max(b[0], b[2])};
}

bool suppresses(const Box& a, const Box& b, bool center_point_box, double iou_threshold) {
  const auto ea = extent(a, center_point_box), eb = extent(b, center_point_box);
  const double x_min = std::max(ea[0], eb[0]), x_max = std::min(ea[1], eb[1]);
  const double y_min = std::max(ea[2], eb[2]), y_max = std::min(ea[3], eb[3]);
  if (x_max <= x_min || y_max <= y_min) return false;
  const double intersection = (x_max - x_min) * (y_max - y_min);
  const double area_a = (ea[1] - ea[0]) * (ea[3] - ea[2]), area_b = (eb[1] - eb[0]) * (eb[3] - eb[2]);
  const double union_area = area_a + area_b - intersection;
  if (area_a <= 0 || area_b <= 0 || union_area <= 0) return false;
  return intersection / union_area > iou_threshold;
}

HostTensor host_of(const Node& node, OpContext& context, const Value& v) {
  if (v.on_host()) return v.host;
  if (!context.read_back)
    throw ModelError(node.describe() + ": its inputs live on the GPU and this context cannot read them back");
  return context.read_back(v);
}

std::optional<double> optional_scalar(const Node& node, OpContext& context, const Value& v,
                                      const char* what) {
  if (!v.defined()) return std::nullopt;
  const HostTensor t = host_of(node, context, v);
  if (t.numel() != 1)
    throw ModelError(
        fmt::format("{}: {} must be a single value, it has {}", node.describe(), what, t.numel()));
  return t.to_double()[0];
}

std::vector<Value> non_max_suppression(const Node& node, OpContext& context,
                                       const std::vector<Value>& inputs) {
  const Value& boxes_in = input_or_empty(inputs, 0);
  const Value& scores_in = input_or_empty(inputs, 1);
  if (!boxes_in.defined() || !scores_in.defined())
    throw ModelError(node.describe() + ": needs boxes and scores");
  const Shape& bs = boxes_in.shape();
  const Shape& ss = scores_in.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    throw ModelError(fmt::format("{}: boxes {} and scores {} must be [B, N, 4] and [B, C, N]",
                                 node.describe(), shape_to_string(bs), shape_to_string(ss)));
  const int64_t max_per_class = static_cast<int64_t>(
      optional_scalar(node, context, input_or_empty(inputs, 2), "max_output_boxes_per_class").value_or(0));
  const double iou_threshold =
      optional_scalar(node, context, input_or_empty(inputs, 3), "iou_threshold").value_or(0.0);
  const std::optional<double> score_threshold =
      optional_scalar(node, context, input_or_empty(inputs, 4), "score_threshold");
  const bool center_point_box = node.attribute_int("center_point_box", 0) != 0;
  const std::vector<double> boxes = host_of(node, context, boxes_in).to_double();
  const std::vector<double> scores = host_of(node, context, scores_in).to_double();
  const int64_t batches = bs[0], count = bs[1], classes = ss[1];
  std::vector<int64_t> selected;  // (batch, class, box) triples
  for (int64_t b = 0; b < batches && max_per_class > 0; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = &scores[(b * classes + c) * count];
      auto box = [&](int64_t i) {
        return Box{boxes[(b * count + i) * 4], boxes[(b * count + i) * 4 + 1], boxes[(b * count + i) * 4 + 2],
                   boxes[(b * count + i) * 4 + 3]};
      };
      std::vector<int64_t> candidates;
      for (int64_t i = 0; i < count; ++i)
        if (!score_threshold || s[i] > *score_threshold) candidates.push_back(i);
      std::stable_sort(candidates.begin(), candidates.end(),
                       [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
        const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](int64_t k) {
          return suppresses(box(i), box(k), center_point_box, iou_threshold);
        });
        if (suppressed) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  const int64_t rows = static_cast<int64_t>(selected.size() / 3);
  return {Value{.host = HostTensor::from_values<int64_t>({rows, 3}, selected)}};
}

}  // namespace

void register_non_max_suppression_ops(std::vector<OpEntry>& ops) {
  ops.push_back({"", "NonMaxSuppression", 10, non_max_suppression,
                 "boxes and scores read back mid-run, greedy selection on the host"});
}

}  // namespace onda::ops
