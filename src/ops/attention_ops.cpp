// onda::Attention, the node graph/fuse_attention.h puts in place of MatMul -> Softmax -> MatMul:
// the batch dims flattened into one (batch * heads), then the fused kernel (kernels/attention).
#include <fmt/format.h>

#include "graph/fuse_attention.h"
#include "graph/model_error.h"
#include "kernels/attention/attention.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

// [.., rows, cols] -> [prod(..), rows, cols]
Tensor as_batched(const Tensor& t) {
  const Shape& s = t.shape();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  return t.reshape({t.numel() / std::max<int64_t>(rows * cols, 1), rows, cols});
}

std::vector<Value> attention(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (inputs.size() != 3 || !inputs[0].defined() || !inputs[1].defined() || !inputs[2].defined()) {
    throw ModelError(node.describe() + ": needs Q, K and V");
  }
  const Shape& q_shape = inputs[0].shape();
  const Shape& v_shape = inputs[2].shape();
  if (q_shape.size() < 2 || v_shape.size() != q_shape.size()) {
    throw ModelError(fmt::format("{}: Q {} and V {} must have one rank >= 2", node.describe(),
                                 shape_string(q_shape), shape_string(v_shape)));
  }
  Shape out_shape = q_shape;
  out_shape.back() = v_shape.back();
  Value out;
  out.device = context.allocate(inputs[0].dtype(), out_shape);
  kernels::AttentionOptions options;
  options.scale = node.attribute_float(kAttentionScale, 1.0f);
  options.k_transposed = node.attribute_int(kAttentionKTransposed, 0) != 0;
  try {
    const Tensor q = context.to_device(inputs[0]), k = context.to_device(inputs[1]),
                 v = context.to_device(inputs[2]);
    if (k.rank() != q.rank()) throw std::invalid_argument("K must have Q's rank");
    kernels::record_attention(context.kernels, context.recorder, context.pool, as_batched(q), as_batched(k),
                              as_batched(v), options, as_batched(out.device));
  } catch (const std::invalid_argument& e) {
    throw ModelError(fmt::format("{}: {}", node.describe(), e.what()));
  }
  return {out};
}

}  // namespace

void register_attention_ops(std::vector<OpEntry>& ops) {
  ops.push_back(
      {std::string(kOndaDomain), std::string(kFusedAttentionOp), 0, attention,
       "internal: MatMul -> Softmax -> MatMul fused at plan time (flash attention, one pass over keys)"});
}

}  // namespace onda::ops
