// The host evaluation of layout ops (graph/host_ops.h) that the runtime uses for values known on the
// host (shape arithmetic, position tables): Expand, Tile and ConstantOfShape against an element-by-
// element reference over random shapes and every element size (1, 2, 4 and 8 bytes).
#include <gtest/gtest.h>

#include <cstring>

#include "graph/host_ops.h"
#include "harness.h"
#include "test_graph_nodes.h"

namespace onda::test {
namespace {

// Random bytes: every element distinct enough that a wrong source index shows.
HostTensor random_tensor(DType dtype, const Shape& shape, Random& rng) {
  HostTensor t(dtype, shape);
  std::byte* bytes = t.mutable_data();
  const size_t n = static_cast<size_t>(t.numel()) * host_element_size(dtype);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>(rng.integer(0, 255));
  if (dtype == DType::boolean)
    for (int64_t i = 0; i < t.numel(); ++i) bytes[i] = static_cast<std::byte>(rng.integer(0, 1));
  return t;
}

// out[c] = in[c mod in.shape] per output coordinate, in.shape right-aligned with 1 for missing dims
// (Expand's broadcast when modulus is the broadcast dim 1, Tile's wrap otherwise).
HostTensor reference_wrap(const HostTensor& in, const Shape& out_shape) {
  HostTensor out(in.dtype(), out_shape);
  const size_t element = host_element_size(in.dtype());
  const size_t rank = out_shape.size(), offset = rank - static_cast<size_t>(in.rank());
  std::vector<int64_t> c(rank, 0);
  for (int64_t flat = 0; flat < out.numel(); ++flat) {
    int64_t source = 0;
    for (size_t a = offset; a < rank; ++a)
      source = source * in.shape()[a - offset] + c[a] % in.shape()[a - offset];
    std::memcpy(out.mutable_data() + flat * element, in.data() + source * element, element);
    for (size_t a = rank; a-- > 0;) {
      if (++c[a] < out_shape[a]) break;
      c[a] = 0;
    }
  }
  return out;
}

void expect_same_bytes(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(
      std::memcmp(got.data(), want.data(), static_cast<size_t>(got.numel()) * host_element_size(got.dtype())),
      0)
      << what;
}

constexpr DType kDtypes[] = {DType::u8, DType::f16, DType::f32, DType::i64, DType::boolean};

TEST(HostLayoutOps, ExpandMatchesElementByElementBroadcast) {
  Random rng(test_seed());
  const HostOp expand = find_host_op("Expand");
  ASSERT_NE(expand, nullptr);
  const Node node = graph_node("Expand", {"x", "shape"}, {"y"});
  for (int trial = 0; trial < 60; ++trial) {
    const DType dtype = kDtypes[trial % 5];
    const int64_t out_rank = rng.integer(0, 4);
    Shape out_shape, in_shape;
    for (int64_t a = 0; a < out_rank; ++a) out_shape.push_back(rng.integer(1, 7));
    if (trial % 7 == 3 && out_rank > 0) out_shape[rng.integer(0, out_rank - 1)] = 0;  // empty
    // The input: a suffix of the output's axes, each its dim or 1.
    const int64_t in_rank = out_rank == 0 ? 0 : rng.integer(0, out_rank);
    for (int64_t a = out_rank - in_rank; a < out_rank; ++a)
      in_shape.push_back(rng.integer(0, 1) ? out_shape[a] : 1);
    const HostTensor x = random_tensor(dtype, in_shape, rng);
    // The shape operand may itself be shorter, with 1s the input's dims fill.
    std::vector<int64_t> requested(out_shape.begin(), out_shape.end());
    const HostTensor shape =
        HostTensor::from_values<int64_t>({static_cast<int64_t>(requested.size())}, requested);
    const std::vector<HostTensor> y = expand(node, {x, shape});
    ASSERT_EQ(y.size(), 1u);
    expect_same_bytes(y[0], reference_wrap(x, out_shape),
                      "Expand " + shape_to_string(in_shape) + " -> " + shape_to_string(out_shape) + " " +
                          std::string(dtype_name(dtype)));
  }
}

TEST(HostLayoutOps, TileAndConstantOfShapeMatchElementByElement) {
  Random rng(test_seed());
  const HostOp tile = find_host_op("Tile");
  const HostOp constant_of_shape = find_host_op("ConstantOfShape");
  ASSERT_NE(tile, nullptr);
  ASSERT_NE(constant_of_shape, nullptr);
  for (int trial = 0; trial < 30; ++trial) {
    const DType dtype = kDtypes[trial % 5];
    const int64_t rank = rng.integer(1, 4);
    Shape in_shape, out_shape;
    std::vector<int64_t> repeats;
    for (int64_t a = 0; a < rank; ++a) {
      in_shape.push_back(rng.integer(1, 5));
      repeats.push_back(rng.integer(1, 3));
      out_shape.push_back(in_shape.back() * repeats.back());
    }
    const HostTensor x = random_tensor(dtype, in_shape, rng);
    const std::vector<HostTensor> y =
        tile(graph_node("Tile", {"x", "r"}, {"y"}), {x, HostTensor::from_values<int64_t>({rank}, repeats)});
    expect_same_bytes(y.at(0), reference_wrap(x, out_shape), "Tile " + shape_to_string(in_shape));

    // ConstantOfShape: every element the value's bytes.
    Node fill = graph_node("ConstantOfShape", {"shape"}, {"y"});
    const HostTensor value = random_tensor(dtype, {1}, rng);
    fill.attributes.push_back(Attribute{"value", value});
    const std::vector<int64_t> dims(out_shape.begin(), out_shape.end());
    const std::vector<HostTensor> filled =
        constant_of_shape(fill, {HostTensor::from_values<int64_t>({rank}, dims)});
    expect_same_bytes(filled.at(0), reference_wrap(value.reshaped(Shape(rank, 1)), out_shape),
                      "ConstantOfShape " + shape_to_string(out_shape));
  }
}

}  // namespace
}  // namespace onda::test
