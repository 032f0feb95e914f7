// onda::Attention, the node graph/fuse_attention.h puts in place of MatMul -> Softmax -> MatMul:
// the batch dims flattened into one (batch * heads), then the fused kernel (kernels/attention).
#include <fmt/format.h>

#include "graph/fold_attention_transposes.h"
#include "graph/fuse_attention.h"
#include "graph/model_error.h"
#include "kernels/attention/attention.h"
#include "kernels/layout/transpose.h"
#include "ops/op_registry.h"

namespace onda::ops {
namespace {

// [.., rows, cols] -> [prod(..), rows, cols]
Tensor as_batched(const Tensor& t) {
  const Shape& s = t.shape();
  const int64_t rows = s[s.size() - 2], cols = s.back();
  return t.reshape({t.numel() / std::max<int64_t>(rows * cols, 1), rows, cols});
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

// Operand i as a tensor and the permutation that gives the kernel's logical [B, rows, cols] from it:
// the one folded into the node (graph/fold_attention_transposes.h), else the tensor with its batch
// dims flattened (K^T's last two dims swapped with k_transposed).
struct Operand {
  Tensor tensor;
  std::vector<int64_t> perm;  // logical dim i is tensor dim perm[i]
  bool folded = false;
  kernels::AttentionOperand view() const { return kernels::AttentionOperand::transposed(tensor, perm); }
  // A contiguous copy in the logical layout (a folded operand too large for strided reads).
  Tensor copy(OpContext& context) const {
    Tensor logical = context.allocate(tensor.dtype(), kernels::transpose_output_shape(tensor.shape(), perm));
    kernels::record_transpose(context.kernels, context.recorder, tensor, perm, logical);
    return logical;
  }
};

Operand operand(const Node& node, size_t i, const Tensor& t, bool k_transposed) {
  Operand a;
  a.folded = node.has_attribute(kAttentionInputPerms[i]);
  a.tensor = a.folded ? t : as_batched(t);
  a.perm = a.folded ? node.attribute_ints(kAttentionInputPerms[i], {}) : std::vector<int64_t>{0, 1, 2};
  if (k_transposed) a.perm = {a.perm[0], a.perm[2], a.perm[1]};  // K: (K^T) with its last two dims swapped
  return a;
}

std::vector<Value> attention(const Node& node, OpContext& context, const std::vector<Value>& inputs) {
  if (inputs.size() != 3 || !inputs[0].defined() || !inputs[1].defined() || !inputs[2].defined()) {
    throw ModelError(node.describe() + ": needs Q, K and V");
  }
  const Shape q_shape = attention_operand_shape(node, 0, inputs[0].shape());
  const Shape v_shape = attention_operand_shape(node, 2, inputs[2].shape());
  if (q_shape.size() < 2 || v_shape.size() != q_shape.size()) {
    throw ModelError(fmt::format("{}: Q {} and V {} must have one rank >= 2", node.describe(),
                                 shape_string(q_shape), shape_string(v_shape)));
  }
  Shape logical_out = q_shape;
  logical_out.back() = v_shape.back();
  const bool out_folded = node.has_attribute(kAttentionOutputPerm);
  const std::vector<int64_t> out_perm =
      out_folded ? node.attribute_ints(kAttentionOutputPerm, {}) : std::vector<int64_t>{0, 1, 2};
  Value out;
  try {
    out.device = context.allocate(inputs[0].dtype(),
                                  out_folded ? kernels::transpose_output_shape(logical_out, out_perm) : logical_out);
    const bool k_transposed = node.attribute_int(kAttentionKTransposed, 0) != 0;
    const Tensor q = context.to_device(inputs[0]), k = context.to_device(inputs[1]),
                 v = context.to_device(inputs[2]);
    if (k.rank() != q.rank()) throw std::invalid_argument("K must have Q's rank");
    const Operand oq = operand(node, 0, q, false), ok = operand(node, 1, k, k_transposed), ov = operand(node, 2, v, false);
    // The node's output is Transpose(logical output, out_perm): the logical output's dim i is its dim
    // inverse(out_perm)[i].
    const Operand oo{out_folded ? out.device : as_batched(out.device), inverse(out_perm), out_folded};
    const float scale = node.attribute_float(kAttentionScale, 1.0f);
    const bool folded = oq.folded || ok.folded || ov.folded || oo.folded;
    if (!folded || kernels::attention_fits_one_binding(context.kernels, oq.view(), ok.view(), ov.view(), oo.view())) {
      kernels::record_attention(context.kernels, context.recorder, context.pool, oq.view(), ok.view(), ov.view(),
                                scale, oo.view());
    } else {
      // Too large for strided reads: contiguous copies, the kernel sliced by batch, the output moved back.
      auto plain = [&](const Operand& a) {
        return a.folded ? kernels::AttentionOperand::contiguous(a.copy(context)) : a.view();
      };
      const kernels::AttentionOperand result =
          oo.folded ? kernels::AttentionOperand::contiguous(context.allocate(out.device.dtype(), oo.view().shape))
                    : oo.view();
      kernels::record_attention(context.kernels, context.recorder, context.pool, plain(oq), plain(ok), plain(ov), scale,
                                result);
      if (oo.folded) kernels::record_transpose(context.kernels, context.recorder, result.tensor, out_perm, out.device);
    }
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
