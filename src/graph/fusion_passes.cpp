#include "graph/fusion_passes.h"

#include "graph/fold_attention_transposes.h"
#include "graph/fold_gemm_output_transpose.h"
#include "graph/fold_rnn_output_transposes.h"
#include "graph/fold_split_views.h"
#include "graph/fuse_activations.h"
#include "graph/fuse_attention.h"
#include "graph/fuse_elementwise.h"
#include "graph/fuse_epilogue.h"
#include "graph/fuse_group_norm.h"
#include "graph/fuse_l2_norm.h"
#include "graph/fuse_matmul_bias.h"
#include "graph/fuse_norm_prelu.h"
#include "graph/fuse_pad_conv.h"
#include "graph/fuse_residual_add.h"
#include "graph/fuse_rotate_half.h"
#include "graph/split_gemm_columns.h"

namespace onda {

std::span<const FusionPass> fusion_passes() {
  static constexpr FusionPass kPasses[] = {
      {"fuse_pad_into_conv", fuse_pad_into_conv},
      {"fuse_matmul_bias", fuse_matmul_bias},
      // before fuse_activations: Y -> Transpose -> Reshape -> LeakyRelu
      {"fold_rnn_output_transposes", fold_rnn_output_transposes},
      {"fuse_activations", fuse_activations},
      {"fuse_group_norms", fuse_group_norms},
      {"fuse_l2_norms", fuse_l2_norms},  // before fuse_elementwise takes its Div and Muls
      {"fuse_norm_prelu", fuse_norm_prelu},
      {"fuse_attention", fuse_attention},
      {"fold_attention_transposes", fold_attention_transposes},
      {"fuse_rotate_half", fuse_rotate_half},
      {"fuse_elementwise", fuse_elementwise},
      {"fuse_epilogues", fuse_epilogues},
      {"fuse_residual_adds", fuse_residual_adds},  // after fuse_epilogues: a GEMM takes one epilogue
      {"split_gemm_columns", split_gemm_columns},
      {"fold_gemm_output_transposes", fold_gemm_output_transposes},
      {"fold_rotate_half_into_elementwise", fold_rotate_half_into_elementwise},
      {"fold_splits_into_elementwise", fold_splits_into_elementwise},
  };
  return kPasses;
}

void run_fusion_passes(Graph& graph) {
  for (const FusionPass& pass : fusion_passes()) pass.run(graph);
}

}  // namespace onda
