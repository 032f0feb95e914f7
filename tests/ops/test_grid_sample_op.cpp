// GridSample through a Session (ops/grid_sample_op.cpp): the opset 20 spellings on a 5-D input,
// opset 16's on 4-D (the kernel's values are checked in tests/kernels/layout/); a grid of the wrong
// rank, an opset 16 spelling under opset 20 and a 5-D input under opset 16 name the node.
#include <gtest/gtest.h>

#include "harness.h"
#include "onda/session.h"
#include "one_node_model.h"
#include "test_session_support.h"

namespace onda::test {
namespace {

onnx::ModelProto grid_sample_model(const Shape& x, const Shape& grid, const Shape& y, int64_t opset,
                                   const std::string& mode) {
  OneNode m("GridSample", {{"x", x}, {"grid", grid}}, {onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT},
            {{"y", y}}, {onnx::TensorProto::FLOAT});
  m.model.mutable_opset_import(0)->set_version(opset);
  set_string(m.node, "mode", mode);
  return m.model;
}

std::string error_of(const onnx::ModelProto& model, const Shape& x, const Shape& grid) {
  TemporaryFolder folder;
  try {
    open_session(model, folder)
        ->run({{"x", floats(x, std::vector<float>(element_count(x), 1.0f))},
               {"grid", floats(grid, std::vector<float>(element_count(grid), 0.0f))}});
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

// A grid of zeros samples the centre: with align_corners 0 and an input of constant 1, every
// output is 1 whatever the mode.
TEST(GridSampleOp, OpsetSpellingsAndRanks) {
  for (const auto& [opset, mode, x, grid, y] :
       std::vector<std::tuple<int64_t, std::string, Shape, Shape, Shape>>{
           {20, "cubic", {1, 2, 3, 4, 5}, {1, 2, 2, 2, 3}, {1, 2, 2, 2, 2}},
           {20, "linear", {2, 1, 7}, {2, 3, 1}, {2, 1, 3}},
           {16, "bicubic", {1, 3, 4, 4}, {1, 2, 5, 2}, {1, 3, 2, 5}},
           {16, "bilinear", {1, 3, 4, 4}, {1, 2, 5, 2}, {1, 3, 2, 5}}}) {
    TemporaryFolder folder;
    auto session = open_session(grid_sample_model(x, grid, y, opset, mode), folder);
    const HostTensor out = session
                               ->run({{"x", floats(x, std::vector<float>(element_count(x), 1.0f))},
                                      {"grid", floats(grid, std::vector<float>(element_count(grid), 0.0f))}})
                               .at("y");
    ASSERT_EQ(out.shape(), y) << mode;
    for (double v : out.to_double()) EXPECT_NEAR(v, 1.0, 1e-6) << mode;
  }
}

TEST(GridSampleOp, BadGridsAndSpellingsNameTheNode) {
  const std::string wrong_rank = error_of(
      grid_sample_model({1, 1, 4, 4}, {1, 3, 3}, {1, 1, 3}, 16, "bilinear"), {1, 1, 4, 4}, {1, 3, 3});
  EXPECT_NE(wrong_rank.find("node_under_test"), std::string::npos) << wrong_rank;
  EXPECT_NE(wrong_rank.find("grid"), std::string::npos) << wrong_rank;
  const std::string old_spelling =
      error_of(grid_sample_model({1, 1, 4, 4}, {1, 3, 3, 2}, {1, 1, 3, 3}, 20, "bilinear"), {1, 1, 4, 4},
               {1, 3, 3, 2});
  EXPECT_NE(old_spelling.find("node_under_test"), std::string::npos) << old_spelling;
  EXPECT_NE(old_spelling.find("unsupported mode 'bilinear'"), std::string::npos) << old_spelling;
  const std::string five_d =
      error_of(grid_sample_model({1, 1, 2, 2, 2}, {1, 2, 2, 2, 3}, {1, 1, 2, 2, 2}, 16, "bilinear"),
               {1, 1, 2, 2, 2}, {1, 2, 2, 2, 3});
  EXPECT_NE(five_d.find("node_under_test"), std::string::npos) << five_d;
}

}  // namespace
}  // namespace onda::test
