// A node recorded as one GEMM (kernels/gemm): C = act(alpha op(A) op(B) + beta D). MatMul and Gemm
// use it, and so do ops that are a GEMM for some shapes (a Conv whose one output position reads its
// whole input). A constant 2-D B is prepacked once and kept in the node's state with the plan, so
// that state must belong to this function alone. `b_input`: B's index among the node's inputs, told
// to the walk once B is packed (OpContext::derived_inputs: later runs may pass B without uploading
// it); -1 where B is not a node input of its own. `residual`: the epilogue program's second input
// (graph/fuse_residual_add.h), of the output's shape; null where the program has none.
#pragma once
#include "kernels/gemm/gemm_epilogue.h"
#include "ops/op_context.h"

namespace onda::ops {

Value record_gemm_node(const Node& node, OpContext& context, const Value& a, bool transpose_a, const Value& b,
                       bool transpose_b, const Value* addend, const kernels::gemm::GemmEpilogue& epilogue,
                       int b_input = -1, const Value* residual = nullptr);

// The same product stored as `column_parts` consecutive parts of its columns (graph/
// split_gemm_columns.h): one Value per part, each a view. Where the product must be split into row
// blocks or batch slices (storage binding limits), the whole product is recorded and the parts copied.
std::vector<Value> record_gemm_node_in_parts(const Node& node, OpContext& context, const Value& a, bool transpose_a,
                                             const Value& b, bool transpose_b, const Value* addend,
                                             const kernels::gemm::GemmEpilogue& epilogue, int b_input,
                                             int64_t column_parts);

}  // namespace onda::ops
