// NonMaxSuppression through a Session (ops/non_max_suppression_op.cpp): random boxes (more than 64
// values, so they live only on the GPU and are read back mid-run) against a reference written the
// other classic way (take the best remaining box, drop every box overlapping it beyond the
// threshold, repeat), both box formats, thresholds given and not; malformed shapes name the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto nms_model(int64_t batches, int64_t classes, int64_t boxes, int64_t max_per_class, float iou,
                           std::optional<float> score_threshold, bool center) {
  OneNode m("NonMaxSuppression", {{"boxes", {batches, boxes, 4}}, {"scores", {batches, classes, boxes}}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT}, {{"selected", {}}},
            {onnx::TensorProto::INT64});
  m.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  auto* graph = m.model.mutable_graph();
  add_int64_initializer(graph, "max", {}, {max_per_class});
  add_float_initializer(graph, "iou", {}, {iou});
  m.node->add_input("max");
  m.node->add_input("iou");
  if (score_threshold) {
    add_float_initializer(graph, "score_threshold", {}, {*score_threshold});
    m.node->add_input("score_threshold");
  }
  if (center) add_int_attribute(m.node, "center_point_box", 1);
  return m.model;
}

double iou(std::array<double, 4> a, std::array<double, 4> b, bool center) {
  auto corners = [&](std::array<double, 4> v) {  // x0, y0, x1, y1 with x0 <= x1, y0 <= y1
    if (center)
      return std::array<double, 4>{v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2};
    return std::array<double, 4>{std::min(v[1], v[3]), std::min(v[0], v[2]), std::max(v[1], v[3]),
                                 std::max(v[0], v[2])};
  };
  const auto p = corners(a), q = corners(b);
  const double w = std::min(p[2], q[2]) - std::max(p[0], q[0]),
               h = std::min(p[3], q[3]) - std::max(p[1], q[1]);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  return inter / ((p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter);
}

TEST(NonMaxSuppressionOp, RandomBoxesAgainstTheDropOverlapsReference) {
  Random rng(test_seed());
  for (int trial = 0; trial < 4; ++trial) {
    const int64_t batches = 2, classes = 2, count = 40, max_per_class = trial == 2 ? 3 : 100;
    const float threshold = trial % 2 ? 0.3f : 0.6f;
    const std::optional<float> score_threshold = trial == 1 ? std::optional<float>(0.4f) : std::nullopt;
    const bool center = trial == 3;
    TemporaryFolder folder;
    auto session = open_session(
        nms_model(batches, classes, count, max_per_class, threshold, score_threshold, center), folder);
    std::vector<float> boxes(batches * count * 4);
    for (int64_t i = 0; i < batches * count; ++i) {
      const std::vector<float> v = rng.uniform(4, 0, 10);
      const std::vector<float> size = rng.uniform(2, 1, 4);
      if (center) {
        boxes[i * 4] = v[0], boxes[i * 4 + 1] = v[1], boxes[i * 4 + 2] = size[0], boxes[i * 4 + 3] = size[1];
      } else {  // corners in either order
        const bool flip = rng.integer(0, 1) == 1;
        boxes[i * 4] = v[0], boxes[i * 4 + 1] = v[1];
        boxes[i * 4 + 2] = v[0] + (flip ? -size[0] : size[0]), boxes[i * 4 + 3] = v[1] + size[1];
      }
    }
    const std::vector<float> scores = rng.uniform(batches * classes * count, 0, 1);
    const HostTensor got = session
                               ->run({{"boxes", floats({batches, count, 4}, boxes)},
                                      {"scores", floats({batches, classes, count}, scores)}})
                               .at("selected");
    std::vector<int64_t> want;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        std::vector<int64_t> remaining;
        for (int64_t i = 0; i < count; ++i)
          if (!score_threshold || scores[(b * classes + c) * count + i] > *score_threshold)
            remaining.push_back(i);
        int64_t taken = 0;
        while (!remaining.empty() && taken < max_per_class) {
          auto best = std::max_element(remaining.begin(), remaining.end(), [&](int64_t i, int64_t j) {
            return scores[(b * classes + c) * count + i] < scores[(b * classes + c) * count + j];
          });
          const int64_t top = *best;
          want.insert(want.end(), {b, c, top});
          ++taken;
          auto box = [&](int64_t i) {
            const float* p = &boxes[(b * count + i) * 4];
            return std::array<double, 4>{p[0], p[1], p[2], p[3]};
          };
          std::erase_if(remaining,
                        [&](int64_t i) { return i == top || iou(box(i), box(top), center) > threshold; });
        }
      }
    ASSERT_EQ(got.shape(), (Shape{static_cast<int64_t>(want.size() / 3), 3})) << "trial " << trial;
    EXPECT_EQ(got.to_int64(), want) << "trial " << trial;
  }
}

TEST(NonMaxSuppressionOp, MismatchedScoresNameTheNode) {
  OneNode m("NonMaxSuppression", {{"boxes", {1, 5, 4}}, {"scores", {1, 1, 6}}},
            {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT}, {{"selected", {}}},
            {onnx::TensorProto::INT64});
  m.model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  TemporaryFolder folder;
  try {
    open_session(m.model, folder)
        ->run({{"boxes", floats({1, 5, 4}, std::vector<float>(20, 1.0f))},
               {"scores", floats({1, 1, 6}, std::vector<float>(6, 1.0f))}});
    ADD_FAILURE() << "scores for 6 boxes with 5 boxes were accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("node_under_test"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace onda::test
