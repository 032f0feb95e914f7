// ONNX's random ops: RandomUniform, RandomNormal (shape from the attribute), RandomUniformLike,
// RandomNormalLike (shape from the input) and Bernoulli (probabilities from the input), on the
// counter-based generator of kernels/random/random.h. onda's rule for the generator's key:
//   with a `seed`      key = (the seed's float32 bits, 0x0DA5EED0): the same tensor on every run, in
//                      every Session, on every adapter (a pure function of seed and element index);
//   without a seed     key = (FNV-1a hash of the node's first output name, how many times this node
//                      has drawn in this Session): each run draws afresh, two nodes draw independently,
//                      and a new Session repeats the same sequence of runs. Such a run is never
//                      replayed from a capture (OpContext::differs_per_run).
// ONNX Runtime's and numpy's values cannot be reproduced (other generators): the conformance
// folders of these ops are checked by statistics instead (tests/ops/test_random_ops.cpp).
// A DOUBLE output is drawn in float32, as every DOUBLE tensor is carried (graph/onnx_data_type.h).
#include <fmt/format.h>

#include <bit>
#include <memory>

#include "graph/model_error.h"
#include "graph/onnx_data_type.h"
#include "kernels/random/random.h"
#include "ops/op_inputs.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

constexpr uint32_t kSeededKeyWord = 0x0DA5EED0u;

DType output_dtype(const Node& node, DType fallback) {
  if (!node.has_attribute("dtype")) return fallback;
  const std::optional<DType> dtype = dtype_from_onnx(node.attribute_int("dtype"));
  if (!dtype)
    throw ModelError(fmt::format("{}: dtype {} is not a type onda supports", node.describe(),
                                 node.attribute_int("dtype")));
  return *dtype;
}

uint32_t fnv1a(const std::string& text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return hash;
}

std::array<uint32_t, 2> key_for(const Node& node, OpContext& context) {
  if (node.has_attribute("seed"))
    return {std::bit_cast<uint32_t>(node.attribute_float("seed")), kSeededKeyWord};
  auto& draws = *context.node_state;
  if (!draws) draws = std::make_shared<uint32_t>(0);
  uint32_t& count = *std::static_pointer_cast<uint32_t>(draws);
  context.differs_per_run = true;
  return {fnv1a(node.outputs.empty() ? node.name : node.outputs[0]), count++};
}

std::vector<Value> random_fill(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const bool like = node.op_type.ends_with("Like");
  const bool normal = node.op_type.starts_with("RandomNormal");
  Shape shape;
  DType dtype;
  if (like) {
    const Value& x = input_or_empty(inputs, 0);
    if (!x.defined() || x.is_sequence()) throw ModelError(node.describe() + ": needs a tensor input");
    shape = x.shape();
    dtype = output_dtype(node, x.dtype());
  } else {
    if (!node.has_attribute("shape")) throw ModelError(node.describe() + ": has no shape attribute");
    shape = node.attribute_ints("shape");
    for (int64_t d : shape)
      if (d < 0)
        throw ModelError(
            fmt::format("{}: shape {} has a negative dimension", node.describe(), shape_to_string(shape)));
    dtype = output_dtype(node, DType::f32);
  }
  if (!is_float(dtype))
    throw ModelError(
        fmt::format("{}: draws floats, the output type {} is not one", node.describe(), dtype_name(dtype)));
  kernels::RandomDraw draw;
  draw.distribution = normal ? kernels::RandomDistribution::Normal : kernels::RandomDistribution::Uniform;
  draw.a = normal ? node.attribute_float("mean", 0.0f) : node.attribute_float("low", 0.0f);
  draw.b = normal ? node.attribute_float("scale", 1.0f) : node.attribute_float("high", 1.0f);
  draw.key = key_for(node, context);
  Value y;
  y.device = context.allocate(dtype, shape);
  rethrow_naming_node(
      node, [&] { kernels::record_random(context.kernels, context.recorder, draw, nullptr, y.device); });
  return {y};
}

std::vector<Value> bernoulli(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  const Value& p = input_or_empty(inputs, 0);
  if (!p.defined() || p.is_sequence() || !is_float(p.dtype()))
    throw ModelError(node.describe() + ": needs a float tensor of probabilities");
  kernels::RandomDraw draw;
  draw.distribution = kernels::RandomDistribution::Bernoulli;
  draw.key = key_for(node, context);
  Value y;
  y.device = context.allocate(output_dtype(node, p.dtype()), p.shape());
  rethrow_naming_node(node, [&] {
    const Tensor probabilities = context.to_device(p);
    kernels::record_random(context.kernels, context.recorder, draw, &probabilities, y.device);
  });
  return {y};
}

}  // namespace

void register_random_ops(std::vector<OpEntry>& ops) {
  const char* note = "Philox4x32-10 per element; seed: same tensor every run; no seed: a per-node draw count";
  for (const char* op : {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"})
    ops.push_back({"", op, 1, random_fill, note});
  ops.push_back({"", "Bernoulli", 15, bernoulli, note});
}

}  // namespace onda::ops
