// ONNX Transpose, Slice, Concat, Split, Gather, Pad, Expand, Tile, Resize, ScatterND, pools onto their kernel families (being written: registers nothing yet).
#include "ops/op_registry.h"

namespace onda::ops {

void register_layout_ops(std::vector<OpEntry>&) {}

}  // namespace onda::ops
