// Plan-time fusion of a zero Pad into the convolutions that read it: PyTorch exports a padding layer
// in front of a convolution (nn.ZeroPad2d, F.pad for causal or asymmetric padding) as Pad -> Conv,
// which writes the padded copy of the input only for the convolution to read it once. The
// convolution pads by itself (its `pads` attribute, zeros outside the input), so the Pad goes and
// each Conv reading it pads by the sum. MP-SENet has 13 such pairs ([1, 256, 329, 203] the largest).
#pragma once
#include <cstddef>

#include "graph/graph.h"

namespace onda {

// Fuses every default-domain Pad (mode "constant", value 0, pads >= 0 on the spatial axes only,
// known at plan time) whose output only default-domain Conv nodes read, each as its X (no other
// node, subgraph or graph output), and whose Convs have auto_pad NOTSET. Returns the Pads removed.
size_t fuse_pad_into_conv(Graph& graph);

}  // namespace onda
