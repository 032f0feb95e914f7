// The fused elementwise kernels' steps from the nodes graph/fuse_elementwise.h and
// graph/fuse_epilogue.h keep as subgraphs: each body node as the one-node op would run it
// (elementwise_call.h), scalar constants folded.
#pragma once
#include <vector>

#include "graph/graph.h"
#include "kernels/elementwise/fused_elementwise.h"

namespace onda::ops {

struct FusedProgram {
  std::vector<DType> input_dtypes;
  std::vector<kernels::FusedConstant> constants;
  std::vector<kernels::FusedStep> steps;
  Shape output_shape;
  DType output_dtype = DType::f32;
};

// The program of `body` (held by node `owner`) for inputs of these dtypes; ModelError naming the
// owner and the body node that cannot be translated or whose dtypes its op rejects.
FusedProgram fused_program_of(const Node& owner, const Graph& body, std::vector<DType> input_dtypes);

// The epilogue a normalization or GEMM node carries (graph/fuse_epilogue.h), its first input being
// the node's value of dtype `value` and a second, where the body has one, a residual of the same
// shape and dtype (graph/fuse_residual_add.h); no steps when it carries none.
kernels::FusedEpilogue fused_epilogue_of(const Node& node, DType value);

}  // namespace onda::ops
