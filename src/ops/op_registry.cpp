#include "ops/op_registry.h"

namespace onda::ops {

const std::vector<OpEntry>& all_ops() {
  static const std::vector<OpEntry> ops = [] {
    std::vector<OpEntry> list;
    register_elementwise_ops(list);
    register_shape_ops(list);
    register_normalization_ops(list);
    register_reduction_ops(list);
    register_layout_ops(list);
    register_matmul_ops(list);
    register_conv_ops(list);
    register_rnn_ops(list);
    register_spectral_ops(list);
    register_control_flow_ops(list);
    register_sequence_ops(list);
    register_einsum_ops(list);
    register_index_ops(list);
    register_trilu_ops(list);
    register_select_ops(list);
    register_random_ops(list);
    register_grid_sample_ops(list);
    register_unique_ops(list);
    register_non_max_suppression_ops(list);
    register_max_unpool_ops(list);
    register_cumsum_ops(list);
    register_det_ops(list);
    register_dropout_ops(list);
    register_loss_ops(list);
    register_rearrange_ops(list);
    register_global_pool_ops(list);
    register_generator_ops(list);
    register_local_norm_ops(list);
    register_attention_ops(list);
    register_rotate_half_ops(list);
    register_fused_elementwise_ops(list);
    return list;
  }();
  return ops;
}

const OpEntry* find_op(std::string_view domain, std::string_view op_type, int64_t opset) {
  const std::string_view wanted = canonical_domain(domain);
  for (const auto& entry : all_ops()) {
    if (entry.op_type == op_type && canonical_domain(entry.domain) == wanted && opset >= entry.first_opset) {
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace onda::ops
