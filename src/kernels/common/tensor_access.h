// Renders common/tensor_access.wgsl for one float tensor: a binding plus load_NAME/store_NAME.
#pragma once
#include <string>

#include "tensor/dtype.h"

namespace onda::kernels {

// `dtype` must be f32 or f16 (throws std::invalid_argument naming `name` otherwise).
// The text stays valid for the life of the program (cached).
const std::string& tensor_access_wgsl(const std::string& name, int binding, DType dtype, bool writable);

}  // namespace onda::kernels
