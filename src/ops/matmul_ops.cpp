// ONNX MatMul, Gemm onto their kernel families (being written: registers nothing yet).
#include "ops/op_registry.h"

namespace onda::ops {

void register_matmul_ops(std::vector<OpEntry>&) {}

}  // namespace onda::ops
