// Plan-time fusion of a Split into the elementwise groups that read its parts: a GLU as exporters
// write it (Split of a conv's or a norm's output along the channel axis, then a * sigmoid(b):
// HTDemucs's 16 DConv GLUs on [512, 96, 336] and [128, 192, 336]) copies each half out before the
// group reads it. When every part of a Split is read only by standalone FusedElementwise nodes, those
// read the Split's input through a strided view of the part instead
// (kernels::FusedElementwiseProblem's views), and the Split goes.
#pragma once
#include <cstddef>
#include <string_view>

#include "graph/graph.h"

namespace onda {

// The attribute (onda-internal) on a FusedElementwise: for each input read as a view, four ints:
// the input's position, the axis of its source it was split from, the first index along that axis and
// the part's extent.
inline constexpr std::string_view kInputViewsAttribute = "onda.input_views";

// Rewrites every such Split (static shapes; no part a graph output or read by anything else). Run
// after fuse_epilogues and fuse_residual_adds (which take standalone groups). Returns the number
// rewritten.
size_t fold_splits_into_elementwise(Graph& graph);

}  // namespace onda
