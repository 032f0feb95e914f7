// The ONNX op registry: (domain, op_type) -> how onda runs it on the GPU, with the opset versions
// it covers. Each op validates its attributes and inputs and throws ModelError naming the node
// (Node::describe()) for anything it does not support, never guessing.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ops/op_context.h"

namespace onda::ops {

// Records `node` (inputs in node order, an omitted optional input as an undefined Value) and
// returns one Value per node output (undefined for omitted outputs).
using RecordOp = std::vector<Value> (*)(const Node& node, OpContext& context, const std::vector<Value>& inputs);

struct OpEntry {
  std::string domain;  // "" = ai.onnx
  std::string op_type;
  int64_t first_opset;  // oldest opset whose semantics the implementation follows
  RecordOp record;
  std::string notes;    // for the generated table of supported ops
};

// The entry for an op in a model that imports `opset` for its domain, or null.
const OpEntry* find_op(std::string_view domain, std::string_view op_type, int64_t opset);
const std::vector<OpEntry>& all_ops();

// Registration, one function per op family file.
void register_elementwise_ops(std::vector<OpEntry>& ops);
void register_shape_ops(std::vector<OpEntry>& ops);
void register_normalization_ops(std::vector<OpEntry>& ops);
void register_reduction_ops(std::vector<OpEntry>& ops);
void register_layout_ops(std::vector<OpEntry>& ops);
void register_matmul_ops(std::vector<OpEntry>& ops);
void register_conv_ops(std::vector<OpEntry>& ops);
void register_rnn_ops(std::vector<OpEntry>& ops);
void register_spectral_ops(std::vector<OpEntry>& ops);
void register_control_flow_ops(std::vector<OpEntry>& ops);
void register_sequence_ops(std::vector<OpEntry>& ops);
void register_einsum_ops(std::vector<OpEntry>& ops);
void register_index_ops(std::vector<OpEntry>& ops);
void register_trilu_ops(std::vector<OpEntry>& ops);
void register_select_ops(std::vector<OpEntry>& ops);
void register_random_ops(std::vector<OpEntry>& ops);
void register_grid_sample_ops(std::vector<OpEntry>& ops);
void register_unique_ops(std::vector<OpEntry>& ops);
void register_non_max_suppression_ops(std::vector<OpEntry>& ops);
void register_max_unpool_ops(std::vector<OpEntry>& ops);
void register_cumsum_ops(std::vector<OpEntry>& ops);
void register_det_ops(std::vector<OpEntry>& ops);
void register_dropout_ops(std::vector<OpEntry>& ops);
void register_loss_ops(std::vector<OpEntry>& ops);
void register_rearrange_ops(std::vector<OpEntry>& ops);
void register_global_pool_ops(std::vector<OpEntry>& ops);
void register_generator_ops(std::vector<OpEntry>& ops);
void register_local_norm_ops(std::vector<OpEntry>& ops);
void register_attention_ops(std::vector<OpEntry>& ops);  // onda-internal fused nodes
void register_rotate_half_ops(std::vector<OpEntry>& ops);
void register_fused_elementwise_ops(std::vector<OpEntry>& ops);

}  // namespace onda::ops
