// The binding and load_NAME/store_NAME accessors of one float tensor (common/tensor_access.wgsl).
// Kernels pass them to their shader as a template value: tensor_access() gives a short token that
// stands in the pipeline key, and the template step (shader_template.h) renders it into WGSL only
// when the shader itself is rendered, on a pipeline cache miss.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "tensor/dtype.h"

namespace onda::kernels {

// The token of one accessor. `dtype` must be f32 or f16 (throws std::invalid_argument naming `name`
// otherwise).
std::string tensor_access(const std::string& name, int binding, DType dtype, bool writable);

// The WGSL of one accessor.
std::string tensor_access_wgsl(const std::string& name, int binding, DType dtype, bool writable);

// The WGSL a tensor_access() token stands for; nullopt when `value` is not such a token.
std::optional<std::string> expand_tensor_access(std::string_view value);

}  // namespace onda::kernels
