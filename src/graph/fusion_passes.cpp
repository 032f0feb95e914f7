#include "graph/fusion_passes.h"

#include "graph/fold_attention_transposes.h"
#include "graph/fold_rnn_output_transposes.h"
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

void run_fusion_passes(Graph& graph) {
  fuse_pad_into_conv(graph);
  fuse_matmul_bias(graph);
  fold_rnn_output_transposes(graph);  // before fuse_activations: Y -> Transpose -> Reshape -> LeakyRelu
  fuse_activations(graph);
  fuse_group_norms(graph);
  fuse_l2_norms(graph);  // before fuse_elementwise takes its Div and Muls
  fuse_norm_prelu(graph);
  fuse_attention(graph);
  fold_attention_transposes(graph);
  fuse_rotate_half(graph);
  fuse_elementwise(graph);
  fuse_epilogues(graph);
  fuse_residual_adds(graph);  // after fuse_epilogues: a GEMM takes one epilogue
  split_gemm_columns(graph);
}

}  // namespace onda
