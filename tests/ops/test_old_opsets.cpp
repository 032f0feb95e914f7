// Models that import opsets older than 13 run with their own opset's semantics: Upsample (7:
// scales attribute, 9: scales input) and Resize-10 (asymmetric coordinates, nearest floor when
// upsampling, ceiling when downsampling, as ONNX Runtime runs them), Clip / Pad / Slice with
// attributes (before 11 / 11 / 10), and at opset 11 Squeeze / Unsqueeze / ReduceSum / Split with
// axes or sizes as attributes and Softmax's 2-D coercion (the softmax over all dims from `axis` on).
// Each output against a float64 reference on random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "harness.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto model_of_opset(int64_t opset) {
  onnx::ModelProto model = empty_model();
  model.mutable_opset_import(0)->set_version(opset);
  return model;
}

void add_floats_attribute(onnx::NodeProto* node, const std::string& name, const std::vector<float>& values) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}

void add_string_attribute(onnx::NodeProto* node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}


// Runs `model` on x and compares each named output (shape and values) with its reference.
void expect_outputs(const onnx::ModelProto& model, const Shape& x_shape, const std::vector<float>& x,
                    const std::map<std::string, std::pair<Shape, std::vector<double>>>& expected) {
  TemporaryFolder folder;
  auto session = open_session(model, folder);
  const auto outputs = session->run({{"x", HostTensor::from_values<float>(x_shape, x)}});
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    ASSERT_EQ(outputs.at(name).shape(), want.first);
    const auto got = outputs.at(name).values<float>();
    ASSERT_EQ(got.size(), want.second.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want.second[i]));
    EXPECT_LE(worst, 1e-5) << name;
  }
}

// Asymmetric linear interpolation along one dim (Upsample / Resize-10 "linear").
double linear_at(const std::vector<float>& row, int64_t n, double coordinate) {
  const auto i0 = static_cast<int64_t>(std::floor(coordinate));
  const int64_t lo = std::min(i0, n - 1), hi = std::min(i0 + 1, n - 1);
  const double t = coordinate - static_cast<double>(i0);
  return row[lo] * (1 - t) + row[hi] * t;
}

TEST(OldOpsets, UpsampleAndResize10RunWithTheirOwnSemantics) {
  Random random(test_seed());
  // Opset 9: Upsample nearest with a scales input, upsampling by 2 and 1.5.
  {
    const Shape xs = {1, 2, 3, 4};
    const auto x = random.normal(shape_numel(xs));
    auto model = model_of_opset(9);
    auto* g = model.mutable_graph();
    add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xs);
    add_float_initializer(g, "scales", {4}, {1, 1, 2, 1.5f});
    add_string_attribute(add_node(g, "Upsample", {"x", "scales"}, {"nearest"}), "mode", "nearest");
    add_float_output(g, "nearest");
    std::vector<double> want;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t i = 0; i < 6; ++i)
        for (int64_t j = 0; j < 6; ++j)
          want.push_back(x[(c * 3 + i / 2) * 4 + static_cast<int64_t>(j / 1.5)]);
    expect_outputs(model, xs, x, {{"nearest", {{1, 2, 6, 6}, want}}});
  }
  // Opset 7: Upsample linear with the scales attribute.
  {
    const Shape xs = {1, 1, 3, 4};
    const auto x = random.normal(shape_numel(xs));
    auto model = model_of_opset(7);
    auto* g = model.mutable_graph();
    add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xs);
    auto* node = add_node(g, "Upsample", {"x"}, {"linear"});
    add_string_attribute(node, "mode", "linear");
    add_floats_attribute(node, "scales", {1, 1, 2, 2});
    add_float_output(g, "linear");
    std::vector<double> want;
    for (int64_t i = 0; i < 6; ++i) {
      // Rows interpolated first, then along them (separable).
      std::vector<float> blended(4);
      for (int64_t j = 0; j < 4; ++j) {
        std::vector<float> column = {x[j], x[4 + j], x[8 + j]};
        blended[j] = static_cast<float>(linear_at(column, 3, i / 2.0));
      }
      for (int64_t j = 0; j < 8; ++j) want.push_back(linear_at(blended, 4, j / 2.0));
    }
    expect_outputs(model, xs, x, {{"linear", {{1, 1, 6, 8}, want}}});
  }
  // Opset 10: Resize nearest downsampling by 0.6 (ceiling) and linear upsampling by 2.
  {
    const Shape xs = {1, 1, 4, 6};
    const auto x = random.normal(shape_numel(xs));
    auto model = model_of_opset(10);
    auto* g = model.mutable_graph();
    add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xs);
    add_float_initializer(g, "down", {4}, {1, 1, 0.6f, 0.6f});
    add_float_initializer(g, "up", {4}, {1, 1, 1, 2});
    add_node(g, "Resize", {"x", "down"}, {"nearest_down"});
    add_string_attribute(add_node(g, "Resize", {"x", "up"}, {"linear_up"}), "mode", "linear");
    add_float_output(g, "nearest_down");
    add_float_output(g, "linear_up");
    std::vector<double> down, up;
    const double scale = static_cast<double>(0.6f);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        const auto si = std::min<int64_t>(3, static_cast<int64_t>(std::ceil(i / scale)));
        const auto sj = std::min<int64_t>(5, static_cast<int64_t>(std::ceil(j / scale)));
        down.push_back(x[si * 6 + sj]);
      }
    for (int64_t i = 0; i < 4; ++i) {
      std::vector<float> row(x.begin() + i * 6, x.begin() + (i + 1) * 6);
      for (int64_t j = 0; j < 12; ++j) up.push_back(linear_at(row, 6, j / 2.0));
    }
    expect_outputs(model, xs, x,
                   {{"nearest_down", {{1, 1, 2, 3}, down}}, {"linear_up", {{1, 1, 4, 12}, up}}});
  }
}

TEST(OldOpsets, AttributeFormsOfClipPadSliceAtOpset9) {
  Random random(test_seed());
  const Shape xs = {2, 3, 5};
  const auto x = random.normal(shape_numel(xs));
  auto model = model_of_opset(9);
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xs);
  auto* clip = add_node(g, "Clip", {"x"}, {"clip"});
  add_float_attribute(clip, "min", -0.5f);
  add_float_attribute(clip, "max", 0.25f);
  auto* pad = add_node(g, "Pad", {"x"}, {"pad"});
  add_ints_attribute(pad, "pads", {0, 1, 2, 0, 0, 1});
  add_float_attribute(pad, "value", 7.0f);
  auto* slice = add_node(g, "Slice", {"x"}, {"slice"});
  add_ints_attribute(slice, "starts", {1, -4});
  add_ints_attribute(slice, "ends", {3, 100});
  add_ints_attribute(slice, "axes", {1, 2});
  for (const char* name : {"clip", "pad", "slice"}) add_float_output(g, name);
  std::vector<double> clipped, padded, sliced;
  for (float v : x) clipped.push_back(std::clamp(v, -0.5f, 0.25f));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 0; b < 4; ++b)
      for (int64_t c = 0; c < 8; ++c) {
        const int64_t sb = b - 1, sc = c - 2;
        padded.push_back(sb >= 0 && sb < 3 && sc >= 0 && sc < 5 ? x[(a * 3 + sb) * 5 + sc] : 7.0);
      }
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = 1; b < 3; ++b)
      for (int64_t c = 1; c < 5; ++c) sliced.push_back(x[(a * 3 + b) * 5 + c]);
  expect_outputs(model, xs, x,
                 {{"clip", {xs, clipped}}, {"pad", {{2, 4, 8}, padded}}, {"slice", {{2, 2, 4}, sliced}}});
}

TEST(OldOpsets, AxesAttributesAndSoftmaxCoercionAtOpset11) {
  Random random(test_seed());
  const Shape xs = {2, 3, 4};
  const auto x = random.normal(shape_numel(xs));
  auto model = model_of_opset(11);
  auto* g = model.mutable_graph();
  add_tensor_value(g->mutable_input(), "x", onnx::TensorProto::FLOAT, xs);
  add_ints_attribute(add_node(g, "Unsqueeze", {"x"}, {"unsqueezed"}), "axes", {0, 3});
  add_ints_attribute(add_node(g, "Squeeze", {"unsqueezed"}, {"squeezed"}), "axes", {0});
  auto* reduce = add_node(g, "ReduceSum", {"x"}, {"reduced"});
  add_ints_attribute(reduce, "axes", {2});
  add_int_attribute(reduce, "keepdims", 0);
  auto* split = add_node(g, "Split", {"x"}, {"split_a", "split_b"});
  add_int_attribute(split, "axis", 1);
  add_ints_attribute(split, "split", {1, 2});
  add_int_attribute(add_node(g, "Softmax", {"x"}, {"softmax"}), "axis", 1);
  for (const char* name : {"unsqueezed", "squeezed", "reduced", "split_a", "split_b", "softmax"})
    add_float_output(g, name);
  const std::vector<double> same(x.begin(), x.end());
  std::vector<double> reduced, split_a, split_b, softmax;
  for (int64_t a = 0; a < 6; ++a) {
    double sum = 0;
    for (int64_t c = 0; c < 4; ++c) sum += x[a * 4 + c];
    reduced.push_back(sum);
  }
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t i = 0; i < 12; ++i) (i < 4 ? split_a : split_b).push_back(x[a * 12 + i]);
  // Opset 11: the input coerced to [2, 12], softmax over each row of 12.
  for (int64_t a = 0; a < 2; ++a) {
    double peak = -INFINITY, sum = 0;
    for (int64_t i = 0; i < 12; ++i) peak = std::max<double>(peak, x[a * 12 + i]);
    for (int64_t i = 0; i < 12; ++i) sum += std::exp(x[a * 12 + i] - peak);
    for (int64_t i = 0; i < 12; ++i) softmax.push_back(std::exp(x[a * 12 + i] - peak) / sum);
  }
  expect_outputs(model, xs, x,
                 {{"unsqueezed", {{1, 2, 3, 1, 4}, same}},
                  {"squeezed", {{2, 3, 1, 4}, same}},
                  {"reduced", {{2, 3}, reduced}},
                  {"split_a", {{2, 1, 4}, split_a}},
                  {"split_b", {{2, 2, 4}, split_b}},
                  {"softmax", {xs, softmax}}});
}

}  // namespace
}  // namespace onda::test
