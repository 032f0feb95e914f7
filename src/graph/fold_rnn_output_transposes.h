// Plan-time fold of the Transpose that PyTorch's export puts after a recurrent layer. nn.LSTM, GRU
// and RNN return [seq, batch, directions x hidden], which the export writes as ONNX's Y [seq,
// directions, batch, hidden] -> Transpose(perm 0, 2, 1, 3) -> Reshape. Where that Transpose is Y's
// only reader (and the layer has layout 0), the layer writes Y in the Transpose's order itself
// (attribute kRnnOutputPerm; kernels::rnn::RnnSpec::y_directions_inner) and the Transpose goes: one
// read and one write of Y fewer per layer (MP-SENet's 8 biGRUs: 33 MB each).
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) on an LSTM, GRU or RNN node: the permutation of Y folded into it
// (0, 2, 1, 3: Y is [seq, batch, directions, hidden]).
inline constexpr std::string_view kRnnOutputPerm = "onda.y_perm";

// Folds every such Transpose; returns the number.
size_t fold_rnn_output_transposes(Graph& graph);

}  // namespace onda
