// ONNX Conv, ConvTranspose onto their kernel families (being written: registers nothing yet).
#include "ops/op_registry.h"

namespace onda::ops {

void register_conv_ops(std::vector<OpEntry>&) {}

}  // namespace onda::ops
